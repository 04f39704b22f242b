export * from "./offers";
export * from "./pools";
