/**
 * The llm executor: one call to the
 * agent's `LanguageModel` with no tools, then the reply as the result — its
 * text, or with a `success` schema the JSON it holds, converted and validated.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Action from "../../Action.ts"
import { type ActionError, ExecutionFailure, ValidationError } from "../../ActionError.ts"
import * as Conversion from "../schema/decode.ts"
import * as Output from "../schema/output.ts"
import type * as Knowledge from "../../Knowledge.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type * as Prompt from "../../Prompt.ts"
import type * as Role from "../../Role.ts"
import type { Attempt } from "./runtime.ts"
import * as Finish from "../model/finish.ts"
import { shorten } from "../text.ts"
import { parseJson } from "../json.ts"

/**
 * The user message of an llm action. Blocks are separated by one blank line:
 *
 * 1. the action's description;
 * 2. when knowledge was retrieved, `Knowledge:` and one line per passage,
 *    `[n] (source) text`, numbered from 1 in retrieval order;
 * 3. when there are arguments, `Input:` and one `name: value` line per
 *    argument in the declared order of the parameters struct — strings as
 *    they are, numbers, booleans and `null` as written in JSON, dates as ISO
 *    strings, objects and arrays as JSON; absent optional keys are left out.
 *
 * ```
 * Count the nights between two dates
 *
 * Knowledge:
 * [1] (guide.md) Check-in is at 3 pm.
 *
 * Input:
 * checkIn: 2026-11-02
 * checkOut: 2026-11-05
 * ```
 */
export const prompt = (
  action: Action.Llm<any, any, any>,
  args: Readonly<Record<string, unknown>>,
  knowledge: ReadonlyArray<Knowledge.Passage>
): string => {
  const blocks = [action.description]
  if (knowledge.length > 0) {
    blocks.push(
      ["Knowledge:", ...knowledge.map((passage, i) => `[${i + 1}] (${passage.source}) ${passage.text}`)].join("\n")
    )
  }
  const lines: Array<string> = []
  for (const name of Object.keys(action.parameters.fields)) {
    if (!Object.hasOwn(args, name) || args[name] === undefined) continue
    lines.push(`${name}: ${show(args[name])}`)
  }
  if (lines.length > 0) blocks.push(["Input:", ...lines].join("\n"))
  return blocks.join("\n\n")
}

const show = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString()
  if (typeof value === "object" && value !== null) {
    const json = Result.try(() => JSON.stringify(value))
    return Result.isSuccess(json) && typeof json.success === "string" ? json.success : String(value)
  }
  return String(value)
}

/**
 * The request of an llm action: its system prompt (if any) and prompt; the
 * action's temperature when `>= 0`, else the role's `spec.model.temperature`
 * when set (and `>= 0`), else none (the client's own); the role's
 * `spec.model.name` as the model, else none (the layer's default); the
 * role's `spec.model.maxTokens`, when set. No tools.
 * With a `success` schema, the response format asking for JSON matching it
 * (named after the action; strict when the projection allows; left out for
 * a schema with no JSON Schema form).
 */
export const request = (
  name: string,
  action: Action.Llm<any, any, any>,
  args: Readonly<Record<string, unknown>>,
  knowledge: ReadonlyArray<Knowledge.Passage>,
  spec: Role.Spec
): LanguageModel.Request => {
  const messages: Array<Prompt.Message> = []
  if (action.systemPrompt !== undefined) messages.push({ role: "system", content: action.systemPrompt })
  messages.push({ role: "user", content: prompt(action, args, knowledge) })
  const roleTemperature = spec.model?.temperature
  const temperature =
    action.temperature >= 0
      ? action.temperature
      : roleTemperature !== undefined && roleTemperature >= 0
        ? roleTemperature
        : undefined
  const model = spec.model?.name
  const maxTokens = spec.model?.maxTokens
  const output = action.success === undefined ? undefined : outputOf(action.success, name)
  return {
    messages,
    action: name,
    ...(temperature === undefined ? {} : { temperature }),
    ...(model === undefined ? {} : { model }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(output === undefined ? {} : { responseFormat: output.format })
  }
}

/** At most 200 characters of the reply, never splitting a surrogate pair. */
export const preview = (text: string): string => shorten(text, 200)

// One fenced block: ``` or ```json (any info string) up to the closing fence.
const FENCE = /```[^\n`]*\n([\s\S]*?)\n?[ \t]*```/g

/**
 * The JSON a reply holds: the whole reply when it parses, else the content
 * of its single fenced block (```json or plain ```, prose around it allowed).
 * `undefined` when neither is JSON (several fenced blocks are ambiguous).
 */
export const extractJson = (text: string): Option.Option<unknown> => {
  const whole = parseJson(text.trim())
  if (Result.isSuccess(whole)) return Option.some(whole.success)
  const blocks = [...text.matchAll(FENCE)]
  if (blocks.length !== 1) return Option.none()
  const inner = parseJson((blocks[0]?.[1] ?? "").trim())
  return Result.isSuccess(inner) ? Option.some(inner.success) : Option.none()
}

// The structured output of a success schema, per schema and name (undefined: no JSON Schema form).
const outputs = new WeakMap<Schema.Top, Map<string, Output.Output | undefined>>()
export const outputOf = (success: Schema.Top, name: string): Output.Output | undefined => {
  let byName = outputs.get(success)
  if (byName === undefined) {
    byName = new Map()
    outputs.set(success, byName)
  }
  if (!byName.has(name)) {
    const made = Output.make(success, name)
    byName.set(name, Result.isSuccess(made) ? made.success : undefined)
  }
  return byName.get(name)
}

// `Conversion.decode` works on argument records: the reply is decoded as the
// one field of a wrapper struct, cached per success schema.
const wrappers = new WeakMap<Schema.Top, Schema.Top>()
const wrapperOf = (success: Schema.Top): Schema.Top => {
  let wrapper = wrappers.get(success)
  if (wrapper === undefined) {
    wrapper = Schema.Struct({ reply: success })
    wrappers.set(success, wrapper)
  }
  return wrapper
}

const unwrapPath = (path: string): string =>
  path === "reply" ? "" : path.startsWith("reply.") ? path.slice(6) : path.startsWith("reply[") ? path.slice(5) : path

/**
 * Decodes a reply against the action's `success` schema with the argument
 * conversion rules of `Conversion.decode` (numeric strings to
 * numbers, `"true"`/`"false"` to booleans, case-insensitive enum literals, a
 * JSON string where an object is expected). The candidate value is the JSON
 * the reply holds ({@link extractJson}), read back from the response format
 * offered (a `null` strict mode allowed for an optional key is an absent
 * key; a wrapped schema's `value` is the answer); a reply holding no JSON is
 * decoded as the text itself, so a string schema accepts plain text.
 *
 * Fails with `ValidationError`: "the model's reply does not match the success
 * schema" with each failing path, or "the model's reply is not JSON", and a
 * preview of at most 200 characters of the reply.
 */
export const decodeReply = (
  name: string,
  success: Schema.Top,
  text: string,
  label = "success schema"
): Effect.Effect<unknown, ValidationError, unknown> => {
  const json = extractJson(text)
  const output = outputOf(success, name)
  const candidate = Option.isSome(json)
    ? output === undefined
      ? json.value
      : Output.candidateOf(output, json.value)
    : text
  return Conversion.decode(wrapperOf(success), { reply: candidate }, { action: name }).pipe(
    Effect.map((decoded) => (decoded as { readonly reply: unknown }).reply),
    Effect.mapError((error) => {
      const issues = error.issues.map((issue) => ({ path: unwrapPath(issue.path), message: issue.message }))
      const what = Option.isSome(json)
        ? `does not match the ${label} (${issues
            .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
            .join("; ")})`
        : `is not JSON and does not match the ${label}`
      return new ValidationError({
        action: name,
        message: `${name}: the model's reply ${what}; reply: ${JSON.stringify(preview(text))}`,
        issues
      })
    })
  )
}

/**
 * Runs an llm action's attempt: one model call, then its reply.
 *
 * - No `LanguageModel` in the context → VALIDATION "LanguageModel not
 *   provided", inside the run step, so a fallback runs.
 * - A refusal → EXECUTION "the model refused: …" with the refusal as
 *   excerpt (at most 1,000 characters).
 * - A reply the model did not finish (cut at its token limit, or stopped by
 *   a content filter) → EXECUTION naming `max_tokens` (or the filter): its
 *   answer is incomplete, with or without `success`.
 * - Without `success`: the reply's text is the result; an empty or
 *   whitespace-only reply is EXECUTION ("the model returned no text", with
 *   the finish reason): there is nothing to return, and `""` would pass
 *   silently through mappers and guardrails.
 * - With `success`: see {@link decodeReply}.
 *
 * The call's usage goes to the current `LanguageModel.UsageMeter` (the model
 * records it).
 */
export const run = (attempt: Attempt<Action.Llm<any, any, any>>): Effect.Effect<unknown, ActionError, any> =>
  Effect.flatMap(Effect.serviceOption(LanguageModel.LanguageModel), (model) => {
    const { name, action } = attempt
    if (Option.isNone(model)) {
      return Effect.fail(
        new ValidationError({
          action: name,
          message: `${name}: LanguageModel not provided: provide a LanguageModel layer (e.g. @rolecraft/openai) to run llm actions`,
          issues: [{ path: "", message: "LanguageModel not provided" }]
        })
      )
    }
    const call = request(name, action, attempt.args, attempt.context.knowledge, attempt.spec ?? {})
    return Effect.flatMap(model.value.generate(call), (response): Effect.Effect<unknown, ActionError, unknown> => {
      const stopped = Finish.refused(name, response) ?? Finish.unfinished(name, response, "answer")
      if (stopped !== undefined) return Effect.fail(stopped)
      if (action.success !== undefined) return decodeReply(name, action.success, response.text)
      if (response.text.trim().length === 0) {
        return Effect.fail(
          new ExecutionFailure({
            action: name,
            message: `${name}: the model returned no text (finish reason: ${response.finishReason})`
          })
        )
      }
      return Effect.succeed(response.text)
    })
  })
