/**
 * Guardrails (SPEC §9 steps 3 and 8): limits on what goes into an action and
 * what comes out of it. A role's guardrails are the default for every action;
 * an action's own replace them (no merge).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { GuardrailViolation } from "./ActionError.ts"

/**
 * Input guardrail: applied to every string leaf of the arguments.
 *
 * - `maxLength`: characters per string leaf.
 * - `blockedPatterns`: regular expressions (or their sources).
 * - `onViolation`: `"reject"` (default, GUARDRAIL) or `"sanitize"` (cut to
 *   `maxLength`, blocked matches removed).
 *
 * @since 0.1.0
 */
export interface Input {
  readonly maxLength?: number | undefined
  readonly blockedPatterns?: ReadonlyArray<RegExp | string> | undefined
  readonly onViolation?: "reject" | "sanitize" | undefined
}

/**
 * Output guardrail: applied to the result's string form.
 *
 * - `maxCharacters`: length of the string form.
 * - `blockedPatterns`: regular expressions (or their sources).
 * - `onViolation`: `"reject"` (default, GUARDRAIL) or `"truncate"` (string
 *   results cut to `maxCharacters`).
 *
 * @since 0.1.0
 */
export interface Output {
  readonly maxCharacters?: number | undefined
  readonly blockedPatterns?: ReadonlyArray<RegExp | string> | undefined
  readonly onViolation?: "reject" | "truncate" | undefined
}

/**
 * What `Action.guardrails` and a role's `guardrails` hold.
 *
 * @since 0.1.0
 */
export interface Policy {
  readonly input?: Input | undefined
  readonly output?: Output | undefined
}

/**
 * Step 3, after the before hook: checks (or sanitizes) the string leaves of
 * the arguments. Filled in by the policies issue; passes arguments through.
 *
 * @since 0.1.0
 */
export const checkInput = (
  _action: string,
  _policy: Input | undefined,
  args: Readonly<Record<string, unknown>>
): Effect.Effect<Readonly<Record<string, unknown>>, GuardrailViolation> => Effect.succeed(args)

/**
 * Step 8: checks (or truncates) the result's string form. Filled in by the
 * policies issue; passes the result through.
 *
 * @since 0.1.0
 */
export const checkOutput = <A>(
  _action: string,
  _policy: Output | undefined,
  result: A
): Effect.Effect<A, GuardrailViolation> => Effect.succeed(result)
