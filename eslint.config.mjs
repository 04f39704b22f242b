// TypeScript lint: typescript-eslint's recommended rules over every hand-written module.
// Generated code (the IDL types, the Codama clients) is left as its generators write it.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "target/", "data/", "idl/codama/", "idl/offers.ts", "idl/pools.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks an argument or binding kept for its position (handlers, destructuring).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
);
