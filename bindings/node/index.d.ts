// The declarations of the native module are generated from the Rust crate
// (`binding.d.ts`, written by `napi build`); this file only adds the
// process-wide registry.
import { PromptRegistry } from './binding';

export * from './binding';

/** The process-wide registry of this JavaScript thread: `PromptRegistry.global()`. */
export declare const promptRegistry: PromptRegistry;
