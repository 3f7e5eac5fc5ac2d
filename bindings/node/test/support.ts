// Helpers the test files share; no tests of its own.
import assert from 'node:assert/strict';

/** Calls `f` with arguments TypeScript would refuse. */
export function untyped(f: (...args: any[]) => unknown, ...args: unknown[]): unknown {
  return f(...args);
}

/** An `assert.throws` check: a TypeError naming `argument`. */
export function typeErrorNaming(argument: string) {
  return (e: unknown) => {
    assert.ok(e instanceof TypeError, `expected a TypeError, got ${String(e)}`);
    assert.equal((e as NodeJS.ErrnoException).code, 'ERR_INVALID_ARG_TYPE');
    assert.match(e.message, new RegExp('`' + argument.replace(/[.[\]]/g, '\\$&') + '`'));
    return true;
  };
}
