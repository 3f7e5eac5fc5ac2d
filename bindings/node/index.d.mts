// The declarations of the ES module entry: those of the CommonJS entry.
export * from './index.js';
