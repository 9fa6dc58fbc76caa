/**
 * Guardrails: limits on what goes into an action and
 * what comes out of it. A role's guardrails are the default for every action;
 * an action's own replace them (no merge).
 *
 * @example
 * ```ts
 * import { Action } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const note = Action.local({
 *   description: "Save a note",
 *   parameters: { text: Schema.String },
 *   run: ({ text }) => `saved ${text.length} characters`
 * }).pipe(
 *   // no card numbers in, nothing longer than 80 characters in
 *   Action.guardrails({ input: { maxLength: 80, blockedPatterns: [/\b\d{13,16}\b/] } })
 * )
 * ```
 *
 * @since 0.1.0
 */

/**
 * Input guardrail: applied to every string leaf of the arguments.
 *
 * - `maxLength`: characters per string leaf.
 * - `blockedPatterns`: regular expressions (or their sources).
 * - `onViolation`: `"reject"` (default, GUARDRAIL) or `"sanitize"` (cut to
 *   `maxLength`, blocked matches removed).
 *
 * @category models
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
 * @category models
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
 * @category models
 * @since 0.1.0
 */
export interface Policy {
  readonly input?: Input | undefined
  readonly output?: Output | undefined
}
