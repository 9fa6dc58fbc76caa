/**
 * Secrets never appear in errors, events, spans or logs. Executors read a
 * secret as an Effect `Redacted` through `Config`, and pass every error they
 * raise through `scrub`, which replaces each secret's text (and its base64 and
 * URL-encoded forms) wherever it appears. The agent's pipeline then redacts
 * every step of a call (hooks, result mapper, fallback included) of the
 * secrets its action reads, through `redacting`.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { type ActionError, isActionError } from "../ActionError.ts"

const marker = "[REDACTED]"

/**
 * The fewest characters a secret read from the environment may have: a
 * shorter one would be found inside ordinary words, and redacting it would
 * garble every message, so executors refuse it with VALIDATION naming the
 * variable.
 */
export const minimumSecretLength = 8

const forms = (secret: string): ReadonlyArray<string> => {
  if (secret.length === 0) return []
  const all = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString("base64")])
  return [...all].filter((form) => form.length > 0)
}

/**
 * Replaces every form of every secret in a text.
 */
export const text = (value: string, secrets: ReadonlyArray<Redacted.Redacted<string>>): string => {
  let out = value
  for (const secret of secrets) {
    for (const form of forms(Redacted.value(secret))) out = out.split(form).join(marker)
  }
  return out
}

/**
 * Replaces secrets in any string inside a JSON-like value (for events and
 * span attributes).
 */
export const value = (input: unknown, secrets: ReadonlyArray<Redacted.Redacted<string>>): unknown => {
  if (secrets.length === 0) return input
  if (typeof input === "string") return text(input, secrets)
  if (Array.isArray(input)) return input.map((item) => value(item, secrets))
  if (typeof input === "object" && input !== null && Object.getPrototypeOf(input) === Object.prototype) {
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, value(v, secrets)]))
  }
  return input
}

// The fewest characters of a secret's start that an excerpt's end must show to be taken for a cut secret.
const shortestCut = 3

/**
 * An excerpt with every secret replaced, and the start of one it ends with
 * (a cut made before redacting, by an executor or user code) replaced too.
 */
export const excerpt = (value: string, secrets: ReadonlyArray<Redacted.Redacted<string>>): string => {
  const out = text(value, secrets)
  // The end of the excerpt, without the ellipsis a cut may have added.
  const body = out.endsWith("…") ? out.slice(0, -1) : out
  let longest = 0
  for (const secret of secrets) {
    for (const form of forms(Redacted.value(secret))) {
      for (let length = Math.min(form.length - 1, body.length); length >= shortestCut; length--) {
        if (length > longest && body.endsWith(form.slice(0, length))) longest = length
      }
    }
  }
  return longest === 0 ? out : `${body.slice(0, body.length - longest)}${marker}${out.slice(body.length)}`
}

// What a reporter could show of a cause: its message, stack and string form, its own cause and an AggregateError's errors, a few levels deep.
const causeText = (cause: unknown, depth: number): string => {
  if (cause === undefined || cause === null || depth > 5) return ""
  if (!(cause instanceof Error)) return String(cause)
  const nested = cause instanceof AggregateError ? cause.errors.map((inner) => causeText(inner, depth + 1)) : []
  return [cause.message, cause.stack ?? "", causeText(cause.cause, depth + 1), ...nested].join("\n")
}

/**
 * An action error with every secret removed from its message, excerpt and
 * issues. Its `cause` is dropped when it mentions a secret, since a cause is
 * an arbitrary object that cannot be rewritten safely.
 */
export const scrub = <E extends ActionError>(error: E, secrets: ReadonlyArray<Redacted.Redacted<string>>): E => {
  if (secrets.length === 0 || !isActionError(error)) return error
  const fields: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(error)) fields[key] = field
  fields.message = text(error.message, secrets)
  if ("excerpt" in error && typeof error.excerpt === "string") fields.excerpt = excerpt(error.excerpt, secrets)
  if ("issues" in error) fields.issues = value(error.issues, secrets)
  if (error.cause !== undefined) {
    const shown = causeText(error.cause, 0)
    if (text(shown, secrets) === shown) fields.cause = error.cause
    else delete fields.cause
  }
  delete fields._tag
  const Constructor = error.constructor as new (fields: Record<string, unknown>) => E
  return new Constructor(fields)
}

/**
 * Runs `self` and scrubs any action error it fails with of the secrets
 * `secrets` reads (read only on failure, so a call that succeeds pays
 * nothing).
 */
export const redacting = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  secrets: Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>>
): Effect.Effect<A, E, R> =>
  Effect.catch(self, (error) =>
    isActionError(error) ? Effect.flatMap(secrets, (read) => Effect.fail(scrub(error, read) as E)) : Effect.fail(error)
  )
