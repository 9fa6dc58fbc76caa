/**
 * The secrets an agent knows: its actions' credentials — a webService's `authTokenEnv`, an mcpTool's
 * `apiKeyEnv` (its agent's own MCP servers included), read through `Config` from the provider in context, and
 * the credential variables of a stdio server's environment — the secrets the `LanguageModel` in context
 * declares (its provider's key, whichever layer made it), and those the `McpClient` in context obtained by
 * itself (OAuth tokens, those it obtains during a call included: a list of them learns, see `learning`). Every
 * exit of the agent redacts all of them: the
 * pipeline's and a chat turn's errors, the event hub, the telemetry writer and the tool-message writer. They
 * are read where a string may leave with one — on failure, with content tracing, for an event or span
 * attribute that carries outside text, once per chat turn — never on the path of a call that succeeds with
 * nothing outside to report; their values are read each time, not kept, so a key a provider rotates is
 * redacted from its first use.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { LanguageModel } from "../LanguageModel.ts"
import { McpClient } from "../McpClient.ts"
import * as Redact from "./redact.ts"

/** Reads secrets, now (an unset or refused credential is no secret: it reads as none). */
export type Read = Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>>

const none: ReadonlyArray<Redacted.Redacted<string>> = []

/** Secrets without repeats (several actions often read one variable). */
const unique = (secrets: ReadonlyArray<Redacted.Redacted<string>>): ReadonlyArray<Redacted.Redacted<string>> => {
  if (secrets.length < 2) return secrets
  const byValue = new Map<string, Redacted.Redacted<string>>()
  for (const secret of secrets) byValue.set(Redacted.value(secret), secret)
  return byValue.size === secrets.length ? secrets : [...byValue.values()]
}

/** The credentials of several actions as one read; `undefined` when none of them names one. */
export const ofActions = (reads: Iterable<Read | undefined>): Read | undefined => {
  const named: Array<Read> = []
  for (const read of reads) if (read !== undefined) named.push(read)
  if (named.length === 0) return undefined
  const [only] = named
  return named.length === 1 && only !== undefined
    ? only
    : Effect.map(Effect.all(named), (lists) => unique(lists.flat()))
}

/** Every secret the agent knows now: its actions' credentials (`actions`) and the model's in context. */
export const known = (actions: Read | undefined): Read =>
  Effect.flatMap(Effect.serviceOption(LanguageModel), (model) =>
    learning(withModel(actions, Option.isSome(model) ? model.value : undefined))
  )

const learningLists = new WeakSet<object>()

/**
 * `secrets`, and the secrets the MCP client in context obtains by itself (OAuth tokens, registered client
 * secrets) — those it has now and every one it obtains later: an exit that redacts with this list when it
 * writes (a span's result at the call's end, a tool message, a thread row) hides a token obtained after the
 * list was read, during the very call that obtained it.
 *
 * One boundary: the list is an array whose reads (its length, its items, iterating it) first take in what the
 * client has obtained since; it never shrinks.
 */
const live = (
  secrets: ReadonlyArray<Redacted.Redacted<string>>,
  obtained: () => ReadonlyArray<Redacted.Redacted<string>>
): ReadonlyArray<Redacted.Redacted<string>> => {
  const list = [...secrets]
  const seen = new Set(list.map((secret) => Redacted.value(secret)))
  const learn = () => {
    for (const secret of obtained()) {
      const value = Redacted.value(secret)
      if (!seen.has(value)) {
        seen.add(value)
        list.push(secret)
      }
    }
  }
  learn()
  const proxy = new Proxy(list, {
    get: (target, key, receiver) => {
      learn()
      return Reflect.get(target, key, receiver)
    },
    has: (target, key) => {
      learn()
      return Reflect.has(target, key)
    },
    ownKeys: (target) => {
      learn()
      return Reflect.ownKeys(target)
    }
  })
  learningLists.add(proxy)
  return proxy
}

/** Whether a list of secrets takes in what the MCP client obtains (see {@link learning}): it may grow. */
export const learns = (secrets: ReadonlyArray<Redacted.Redacted<string>> | undefined): boolean =>
  secrets !== undefined && learningLists.has(secrets)

/** `read`'s secrets, and those the MCP client in context obtains, now and later (when it obtains any). */
export const learning = (read: Read): Read =>
  Effect.flatMap(Effect.serviceOption(McpClient), (client) => {
    const obtained = Option.isSome(client) ? client.value.secrets : undefined
    return obtained === undefined ? read : Effect.map(read, (secrets) => live(secrets, obtained))
  })

/** Every secret the agent knows with `model` as its model: its actions' credentials, read now, and the model's. */
export const withModel = (actions: Read | undefined, model: LanguageModel["Service"] | undefined): Read => {
  const own = model?.secrets ?? none
  if (actions === undefined) return Effect.succeed(own)
  return own.length === 0 ? actions : Effect.map(actions, (read) => unique([...read, ...own]))
}

/** A text with the secrets replaced; the identity when there are none. */
export const redactor = (secrets: ReadonlyArray<Redacted.Redacted<string>>): ((text: string) => string) =>
  secrets.length === 0 && !learns(secrets) ? identity : (text) => Redact.text(text, secrets)

const identity = (text: string): string => text

/**
 * `self`, its action errors scrubbed of every secret the agent knows (read only when it fails): the error
 * exit of the pipeline and of a chat turn.
 */
export const redacting = <A, E, R>(self: Effect.Effect<A, E, R>, actions: Read | undefined): Effect.Effect<A, E, R> =>
  Redact.redacting(self, known(actions))
