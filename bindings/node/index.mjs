// The ES module entry: the same objects as the CommonJS entry (one native
// module, one process-wide registry), as named exports an `import`
// resolves statically.
import promptreg from './index.js';

export const {
  Follower,
  Pack,
  PromptRegistry,
  Watcher,
  check,
  checkSettings,
  resolvePrompt,
  resolvePromptBlock,
  promptRegistry,
} = promptreg;
