/**
 * Redaction: replacing each secret — its text, and the forms it takes when
 * it is encoded (URL-encoded, base64, inside a JSON string) — with
 * `[REDACTED]` in a text, a JSON-like value or an action error. Executors
 * scrub their own errors of the secret they read; the agent's exits (see
 * `secrets.ts`) scrub everything that leaves it of every secret it knows;
 * a model call made for the agent scrubs its errors of them too (`Known`),
 * before its own span records them.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { type ActionError, isActionError } from "../ActionError.ts"

/** What a secret is replaced with. */
export const marker = "[REDACTED]"

/**
 * The fewest characters a secret read from the environment may have: a
 * shorter one would be found inside ordinary words, and redacting it would
 * garble every message, so executors refuse it with VALIDATION naming the
 * variable.
 */
export const minimumSecretLength = 8

// The forms of one secret, longest first (a form inside a longer one is replaced after it), made once per
// secret value: a secret is read again for every failure, but its text rarely changes.
const formsOf = new Map<string, ReadonlyArray<string>>()
const maxCachedForms = 1024

const forms = (secret: string): ReadonlyArray<string> => {
  const known = formsOf.get(secret)
  if (known !== undefined) return known
  const made =
    secret.length === 0
      ? []
      : [
          ...new Set([
            secret,
            encodeURIComponent(secret),
            Buffer.from(secret).toString("base64"),
            // The secret as it is written inside a JSON string (a tool message, a span attribute's JSON).
            JSON.stringify(secret).slice(1, -1)
          ])
        ]
          .filter((form) => form.length > 0)
          .sort((a, b) => b.length - a.length)
  if (formsOf.size < maxCachedForms) formsOf.set(secret, made)
  return made
}

/**
 * Replaces every form of every secret in a text, and the start of one cut
 * off right before an ellipsis (`…`, the mark of every cut the library
 * makes: a preview or message cut before it was redacted). A text that holds
 * none is returned as it is, without a copy.
 */
export const text = (value: string, secrets: ReadonlyArray<Redacted.Redacted<string>>): string => {
  let out = value
  for (const secret of secrets) {
    for (const form of forms(Redacted.value(secret))) {
      if (out.includes(form)) out = out.split(form).join(marker)
    }
  }
  return secrets.length > 0 && out.includes(ellipsis) ? cutsRedacted(out, secrets) : out
}

const ellipsis = "…"

// The fewest characters of a secret's start that a cut must show to be taken for a cut secret.
const shortestCut = 3

/** How many characters at the end of `body` are the start of a secret (0 when none, or fewer than 3). */
const cutSecretAt = (body: string, secrets: ReadonlyArray<Redacted.Redacted<string>>): number => {
  let longest = 0
  for (const secret of secrets) {
    for (const form of forms(Redacted.value(secret))) {
      for (let length = Math.min(form.length - 1, body.length); length > Math.max(longest, shortestCut - 1); length--) {
        if (body.endsWith(form.slice(0, length))) {
          longest = length
          break
        }
      }
    }
  }
  return longest
}

// Each ellipsis may end a cut: the start of a secret right before it is replaced too.
const cutsRedacted = (value: string, secrets: ReadonlyArray<Redacted.Redacted<string>>): string => {
  let out = ""
  let from = 0
  for (let at = value.indexOf(ellipsis); at >= 0; at = value.indexOf(ellipsis, at + 1)) {
    const before = value.slice(from, at)
    const cut = cutSecretAt(before, secrets)
    out += `${cut === 0 ? before : `${before.slice(0, before.length - cut)}${marker}`}${ellipsis}`
    from = at + ellipsis.length
  }
  return out + value.slice(from)
}

/**
 * Replaces secrets in any string inside a JSON-like value (for events and
 * span attributes): strings, arrays and plain objects are rewritten, other
 * values kept.
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

/**
 * An excerpt with every secret replaced (see {@link text}), and the start of
 * one it ends with (a cut made before redacting, by an executor or user
 * code, with or without an ellipsis) replaced too.
 */
export const excerpt = (value: string, secrets: ReadonlyArray<Redacted.Redacted<string>>): string => {
  const out = text(value, secrets)
  // The end of the excerpt, without the ellipsis a cut may have added.
  const body = out.endsWith(ellipsis) ? out.slice(0, -ellipsis.length) : out
  const cut = cutSecretAt(body, secrets)
  return cut === 0 ? out : `${body.slice(0, body.length - cut)}${marker}${out.slice(body.length)}`
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
 * every other text field (issues, reason, the action name, the names it
 * lists). Its `cause` is dropped when it mentions a secret, since a cause is
 * an arbitrary object that cannot be rewritten safely. An error that holds
 * no secret is returned as it is.
 */
export const scrub = <E extends ActionError>(error: E, secrets: ReadonlyArray<Redacted.Redacted<string>>): E => {
  if (secrets.length === 0 || !isActionError(error)) return error
  const fields: Record<string, unknown> = {}
  let changed = false
  for (const [key, field] of Object.entries(error)) {
    if (key === "_tag" || key === "cause") continue
    const clean = key === "excerpt" && typeof field === "string" ? excerpt(field, secrets) : value(field, secrets)
    if (clean !== field && JSON.stringify(clean) !== JSON.stringify(field)) changed = true
    fields[key] = clean
  }
  fields.message = text(error.message, secrets)
  if (fields.message !== error.message) changed = true
  if (error.cause !== undefined) {
    const shown = causeText(error.cause, 0)
    if (text(shown, secrets) === shown) fields.cause = error.cause
    else changed = true
  }
  if (!changed) return error
  const Constructor = error.constructor as new (fields: Record<string, unknown>) => E
  return new Constructor(fields)
}

/**
 * Runs `self` and scrubs any action error it fails with of the secrets
 * `secrets` reads (read only on failure, so a call that succeeds pays
 * nothing). The failure keeps its cause: only its errors are rewritten.
 */
export const redacting = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  secrets: Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>>
): Effect.Effect<A, E, R> =>
  Effect.catchCause(self, (cause) =>
    Cause.hasFails(cause)
      ? Effect.flatMap(secrets, (read) =>
          Effect.failCause(
            read.length === 0
              ? cause
              : Cause.map(cause, (error) => (isActionError(error) ? (scrub(error, read) as E) : error))
          )
        )
      : Effect.failCause(cause)
  )

/**
 * The secrets an agent knows besides a model's own, for the model calls it makes (an llm action, a chat
 * turn): `LanguageModel.make` scrubs a failed call's error of them too, before its `chat` span records it.
 * Read only when a call fails; none outside an agent.
 */
export const Known = Context.Reference<Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>> | undefined>(
  "@rolecraft/core/internal/redact/Known",
  { defaultValue: () => undefined }
)

/** `error` scrubbed of `own` secrets and of those the agent in context knows (read now). */
export const scrubKnown = <E extends ActionError>(
  error: E,
  own: ReadonlyArray<Redacted.Redacted<string>>
): Effect.Effect<E> =>
  Effect.flatMap(Effect.service(Known), (known) =>
    known === undefined
      ? Effect.succeed(scrub(error, own))
      : Effect.map(known, (read) => scrub(error, own.length === 0 ? read : [...own, ...read]))
  )
