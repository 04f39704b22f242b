/** The validator stack the suites start lives in stack/ so the validator benchmarks start the same one. */
export { validatorStack } from "../../stack/validator-stack";
