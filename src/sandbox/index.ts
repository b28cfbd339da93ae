export * from './lite';
