// What a flow's query or result answers from its state: a copy whose step log is copied too, so an
// answer never shares the array the flow keeps recording into.
export const stateCopy = <S extends { steps: readonly unknown[] }>(state: S): S => ({
  ...state,
  steps: [...state.steps],
});
