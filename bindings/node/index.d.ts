// The declarations of the native module are generated from the Rust crate
// (`binding.d.ts`, written by `napi build`); this file only adds the
// process-wide registry and `resolvePrompt`, written in JavaScript.
import { PromptConfig, PromptRegistry, ResolvePromptOptions } from './binding';

export * from './binding';

/** The process-wide registry of this JavaScript thread: `PromptRegistry.global()`. */
export declare const promptRegistry: PromptRegistry;

/** What `resolvePrompt` returns. */
export interface ResolvedPrompt {
  /** The text to send: the default, the user's block, or both. */
  final: string
  /** The user's block, when there is one. */
  injected?: string
  /** Where the block came from. */
  source: 'inline' | 'global' | 'local' | 'merged' | 'none'
}

/**
 * Resolves one prompt key from its settings and the user's files, reading
 * the files at each call and keeping no state: inline text wins (and
 * replaces the default) in every mode; `off` injects nothing; then the
 * `file` setting; then the mode's files (local over global, `local` only,
 * or both merged); `override` replaces the default, the other modes put
 * the block after it, separated by a blank line.
 */
export declare function resolvePrompt(
  key: string,
  cfg: PromptConfig | undefined,
  cwd: string,
  defaultPrompt: string,
  options: ResolvePromptOptions,
): ResolvedPrompt
