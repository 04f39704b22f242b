export * from "./offers";
export * from "./pools";
export * from "./history";
