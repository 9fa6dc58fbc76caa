/**
 * The guardrail steps of the pipeline: the input guardrail (blocked patterns and sizes in
 * the arguments, found or sanitised) before an action runs, the output guardrail on its
 * result, and the check of a policy's patterns when an agent is made.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { ExecutionFailure, GuardrailViolation, RoleDefinitionError, ValidationError } from "../../ActionError.ts"
import * as Json from "../json.ts"
import { isPlainObject, setOwn } from "../json.ts"
import { cut } from "../text.ts"
import type { Input, Output, Policy } from "../../Guardrail.ts"

interface Compiled {
  /** For testing a string: no global or sticky flag, so no `lastIndex` state. */
  readonly test: ReadonlyArray<RegExp>
  /** For removing every match when sanitizing. */
  readonly replace: ReadonlyArray<RegExp>
  readonly rules: ReadonlyArray<string>
}

const compiledPatterns = new WeakMap<ReadonlyArray<RegExp | string>, Compiled>()

const compile = (patterns: ReadonlyArray<RegExp | string>): Compiled => {
  let compiled = compiledPatterns.get(patterns)
  if (compiled === undefined) {
    const sources = patterns.map((pattern) => (typeof pattern === "string" ? new RegExp(pattern) : pattern))
    compiled = {
      test: sources.map((re) => new RegExp(re.source, re.flags.replace(/[gy]/g, ""))),
      replace: sources.map((re) => new RegExp(re.source, re.flags.includes("g") ? re.flags : `${re.flags}g`)),
      rules: sources.map((re) => re.source)
    }
    compiledPatterns.set(patterns, compiled)
  }
  return compiled
}

const invalidPattern = (patterns: ReadonlyArray<RegExp | string> | undefined): string | undefined => {
  for (const pattern of patterns ?? []) {
    if (typeof pattern === "string") {
      try {
        new RegExp(pattern)
      } catch (error) {
        return `${pattern}: ${error instanceof Error ? error.message : String(error)}`
      }
    } else if (!(pattern instanceof RegExp)) {
      return `${String(pattern)} is neither a RegExp nor a string`
    }
  }
  return undefined
}

/**
 * Checks a policy when an agent is made: every blocked pattern given as a
 * string must be a valid regular expression, and limits must be integers
 * >= 0. Fails `RoleDefinitionError` naming the action (`key`) otherwise.
 *
 * @since 0.1.0
 */
export const validate = (action: string, policy: Policy | undefined): Effect.Effect<void, RoleDefinitionError> => {
  if (policy === undefined) return Effect.void
  const fail = (message: string) =>
    Effect.fail(new RoleDefinitionError({ key: action, message: `Action ${action}: guardrails: ${message}` }))
  const limits = [
    ["input.maxLength", policy.input?.maxLength],
    ["output.maxCharacters", policy.output?.maxCharacters]
  ] as const
  for (const [name, limit] of limits) {
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
      return fail(`${name} must be an integer >= 0, got ${limit}`)
    }
  }
  const bad = invalidPattern(policy.input?.blockedPatterns) ?? invalidPattern(policy.output?.blockedPatterns)
  return bad === undefined ? Effect.void : fail(`invalid blocked pattern ${bad}`)
}

const pathOf = (parent: string, key: string | number): string =>
  typeof key === "number" ? `${parent}[${key}]` : parent === "" ? key : `${parent}.${key}`

interface Violation {
  readonly path: string
  readonly rule: string
  readonly detail: string
}

/** The first rule a string breaks, or `undefined`. */
const inputViolation = (
  policy: Input,
  patterns: Compiled | undefined,
  text: string
): Omit<Violation, "path"> | undefined => {
  if (policy.maxLength !== undefined && text.length > policy.maxLength) {
    return { rule: "maxLength", detail: `${text.length} characters, more than the ${policy.maxLength} allowed` }
  }
  if (patterns !== undefined) {
    for (let i = 0; i < patterns.test.length; i++) {
      if (patterns.test[i]!.test(text)) {
        const rule = patterns.rules[i]!
        return { rule, detail: `matches the blocked pattern /${rule}/` }
      }
    }
  }
  return undefined
}

const findInput = (
  policy: Input,
  patterns: Compiled | undefined,
  value: unknown,
  path: string
): Violation | undefined => {
  if (typeof value === "string") {
    const found = inputViolation(policy, patterns, value)
    return found === undefined ? undefined : { path, ...found }
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findInput(policy, patterns, value[i], pathOf(path, i))
      if (found !== undefined) return found
    }
  } else if (isPlainObject(value)) {
    for (const key in value) {
      const found = findInput(policy, patterns, value[key], pathOf(path, key))
      if (found !== undefined) return found
    }
  }
  return undefined
}

const sanitize = (policy: Input, patterns: Compiled | undefined, value: unknown): unknown => {
  if (typeof value === "string") {
    let text = value
    if (patterns !== undefined) for (const re of patterns.replace) text = text.replace(re, "")
    return policy.maxLength !== undefined && text.length > policy.maxLength ? cut(text, policy.maxLength) : text
  }
  if (Array.isArray(value)) return value.map((item) => sanitize(policy, patterns, item))
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {}
    for (const key in value) setOwn(out, key, sanitize(policy, patterns, value[key]))
    return out
  }
  return value
}

/**
 * Step 3, after the before hook: checks every string leaf of the arguments —
 * at any depth of plain objects and arrays, object keys excluded — against
 * `maxLength` and `blockedPatterns`.
 *
 * - `"reject"` (default): the first leaf that breaks a rule fails
 *   `GuardrailViolation` with `stage: "input"`, `rule` (`"maxLength"` or the
 *   pattern's source) and a message naming the field path (never its value).
 * - `"sanitize"`: returns a copy whose leaves have every blocked match
 *   removed and are then cut to `maxLength` (never inside a surrogate pair);
 *   the caller's object is untouched.
 *
 * Arguments nested more than 1,000 objects or arrays deep fail
 * `ValidationError` "arguments nested too deeply" with the path, before any
 * rule is checked.
 *
 * Without a policy (or when nothing breaks a rule) the arguments pass as they
 * are.
 *
 * @since 0.1.0
 */
export const checkInput = (
  action: string,
  policy: Input | undefined,
  args: Readonly<Record<string, unknown>>
): Effect.Effect<Readonly<Record<string, unknown>>, GuardrailViolation | ValidationError> => {
  if (policy === undefined) return Effect.succeed(args)
  const deep = Json.tooDeep(args)
  if (deep !== undefined) {
    const message = `arguments nested too deeply (more than ${Json.maxDepth} levels) at ${deep}`
    return Effect.fail(
      new ValidationError({ action, message: `${action}: ${message}`, issues: [{ path: deep, message }] })
    )
  }
  const patterns = policy.blockedPatterns === undefined ? undefined : compile(policy.blockedPatterns)
  const violation = findInput(policy, patterns, args, "")
  if (violation === undefined) return Effect.succeed(args)
  if (policy.onViolation === "sanitize") {
    return Effect.succeed(sanitize(policy, patterns, args) as Readonly<Record<string, unknown>>)
  }
  return Effect.fail(
    new GuardrailViolation({
      action,
      stage: "input",
      rule: violation.rule,
      message: `${action}: input guardrail: ${violation.path === "" ? "the arguments" : violation.path} ${violation.detail}`
    })
  )
}

/**
 * The string form of a result that output guardrails check — the same text
 * a chat turn sends the model: a string as it is, `undefined` as `""`,
 * anything else as its JSON, where a bigint is its decimal string, a Date its
 * ISO string, a Map an object and a Set an array. Fails with a message naming
 * the path when the result refers to itself or nests more than 1,000 levels
 * deep.
 *
 * @since 0.1.0
 */
export const stringForm = (result: unknown): Result.Result<string, string> => {
  if (typeof result === "string") return Result.succeed(result)
  if (result === undefined) return Result.succeed("")
  return Result.mapError(Json.write(result), (problem) => problem.message)
}

/**
 * Step 8: checks the result's {@link stringForm} against `maxCharacters` and
 * `blockedPatterns`.
 *
 * - `"reject"` (default): a break fails `GuardrailViolation` with
 *   `stage: "output"` and `rule` (`"maxCharacters"` or the pattern's source).
 * - `"truncate"`: a string result longer than `maxCharacters` is cut to it
 *   (the patterns are then checked on what is kept); a longer result that is
 *   not a string cannot be cut and is rejected. Blocked patterns always
 *   reject. Cuts never split a surrogate pair (the kept text may be one
 *   character shorter).
 *
 * A result that has no string form (it refers to itself, or nests too
 * deeply) fails `ExecutionFailure` "the result cannot be serialised" with the
 * path.
 *
 * @since 0.1.0
 */
export const checkOutput = <A>(
  action: string,
  policy: Output | undefined,
  result: A
): Effect.Effect<A, GuardrailViolation | ExecutionFailure> => {
  if (policy === undefined) return Effect.succeed(result)
  let out = result
  const form = stringForm(result)
  if (Result.isFailure(form)) {
    return Effect.fail(
      new ExecutionFailure({ action, message: `${action}: the result cannot be serialised: ${form.failure}` })
    )
  }
  let text = form.success
  const limit = policy.maxCharacters
  const reject = (rule: string, detail: string) =>
    Effect.fail(
      new GuardrailViolation({ action, stage: "output", rule, message: `${action}: output guardrail: ${detail}` })
    )
  if (limit !== undefined && text.length > limit) {
    if (policy.onViolation !== "truncate" || typeof result !== "string") {
      return reject("maxCharacters", `the result has ${text.length} characters, more than the ${limit} allowed`)
    }
    text = cut(text, limit)
    out = text as A
  }
  if (policy.blockedPatterns !== undefined) {
    const patterns = compile(policy.blockedPatterns)
    for (let i = 0; i < patterns.test.length; i++) {
      if (patterns.test[i]!.test(text)) {
        const rule = patterns.rules[i]!
        return reject(rule, `the result matches the blocked pattern /${rule}/`)
      }
    }
  }
  return Effect.succeed(out)
}
