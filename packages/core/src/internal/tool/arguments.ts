/**
 * The arguments of a model's tool call: its raw `arguments` (a JSON text, or an object a provider already
 * parsed) turned into a JSON object, strictly — malformed or concatenated JSON is never repaired, and JSON that
 * is not an object is refused with a `ValidationError`. The reserved approval parameter is taken out here,
 * where a model's arguments enter: a model cannot present an approval token.
 */
import * as Result from "effect/Result"
import { ValidationError } from "../../ActionError.ts"
import { reservedParameter as approvalTokenParameter } from "../../Approval.ts"
import { isPlainObject } from "../json.ts"
import * as Lossless from "../lossless.ts"
import { shorten } from "../text.ts"

/** At most 500 characters of a raw text, never splitting a surrogate pair. */
const preview = (text: string): string => shorten(text, 500)

const describe = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `a ${typeof u}`

const notAnObject = (tool: string, got: unknown): ValidationError =>
  new ValidationError({
    action: tool,
    message: `arguments must be a JSON object, got ${describe(got)}`,
    issues: [{ path: "", message: `expected a JSON object, got ${describe(got)}` }]
  })

const withoutApprovalToken = (object: Record<string, unknown>): Record<string, unknown> => {
  const { [approvalTokenParameter]: _, ...rest } = object
  return rest
}

/**
 * Parses the raw `arguments` of a model's tool call into a JSON object.
 * The tool must not run when this fails.
 *
 * - A string is parsed strictly: `""` or whitespace only is `{}` (a
 *   zero-argument call, often streamed with no deltas); malformed JSON
 *   (`{"{"tagIds":[1,2]}`, a missing quote, a truncated `{lat: 48.2, lon:`,
 *   or two objects run together `{"title":"a"}{"title":"b"}`) fails with the
 *   parser's message and a preview of at most 500 characters of the raw text —
 *   never a silent `{}` and never "the first object".
 * - JSON that is not an object (`null`, `5`, `"text"`, `[]`) fails with
 *   "arguments must be a JSON object".
 * - A provider that hands over already-parsed arguments: a plain object is
 *   taken, `undefined` (no arguments field) is `{}`, anything else fails.
 * - The reserved `_approval_token` is removed: a model cannot present an
 *   approval token.
 *
 * Fails with `ValidationError` (`action` = `options.tool`, one issue at path
 * `""`). Required fields are checked later, against the action's Schema.
 *
 * For example:
 * ```
 * parseArguments("", { tool: "get_server_version" }) // Result.succeed({})
 * parseArguments("[]", { tool: "search" }) // Result.fail(ValidationError: arguments must be a JSON object, got an array)
 * ```
 */
export const parseArguments = (
  raw: unknown,
  options: { readonly tool: string }
): Result.Result<Record<string, unknown>, ValidationError> => {
  if (raw === undefined) return Result.succeed({})
  if (typeof raw !== "string") {
    return isPlainObject(raw) ? Result.succeed(withoutApprovalToken(raw)) : Result.fail(notAnObject(options.tool, raw))
  }
  if (raw.trim().length === 0) return Result.succeed({})
  // Lossless: a number a double cannot hold keeps the digits the model sent.
  const parsed = Lossless.parse(raw)
  if (Result.isFailure(parsed)) {
    const message = `arguments are not valid JSON (${preview(parsed.failure)}); received: ${preview(raw)}`
    return Result.fail(
      new ValidationError({
        action: options.tool,
        message,
        issues: [{ path: "", message: `not valid JSON: ${preview(parsed.failure)}` }]
      })
    )
  }
  return isPlainObject(parsed.success)
    ? Result.succeed(withoutApprovalToken(parsed.success))
    : Result.fail(notAnObject(options.tool, parsed.success))
}
