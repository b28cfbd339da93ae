// The starters' one input error (src/shared/input-error.ts), as the package exports it.
export {
  StarterInputError,
  parseStarterInput,
  inputIssuesOf,
  describeInputIssues,
  type InputIssue,
} from '../shared/input-error';
