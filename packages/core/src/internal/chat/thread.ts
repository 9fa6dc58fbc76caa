/**
 * A chat turn kept in a thread: the thread held for the whole turn (a second turn on it waits), its window loaded
 * (see `window.ts`), the turn run on it with tool call ids unique across the whole thread, and its exchange written
 * — complete, or so far with the thread marked paused — when the turn ends; a turn that fails writes nothing.
 * Refuses, before anything runs: as VALIDATION a thread option, budget or input that is not one (the input must be
 * the new user message, at most 1,000,000 characters), a thread at its cap of exchanges, a state that is not the
 * thread's paused turn, a resume of a thread with no paused turn; as APPROVAL a new message on a paused thread;
 * with the store's category a store that cannot hold the thread id, be reached, or decode the thread.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type ActionError, ApprovalRequired, ExecutionFailure, type ValidationError } from "../../ActionError.ts"
import type { ChatResult, PausedState, ThreadOptions, Usage } from "../../Chat.ts"
import * as History from "../../History.ts"
import * as Prompt from "../../Prompt.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as ThreadStore from "../../ThreadStore.ts"
import * as Redact from "../redact.ts"
import * as Conversion from "../schema/decode.ts"
import * as Secrets from "../secrets.ts"
import { type Held, type Paused, pausedState } from "../thread/rules.ts"
import * as ChatMessages from "./messages.ts"
import type { Host } from "./context.ts"
import * as Window from "./window.ts"
import { labelOf } from "../label.ts"

/** The most characters of new input a turn on a thread takes. */
export const maxInputLength = 1_000_000

/** A thread option checked. */
export interface Thread {
  readonly id: string
  readonly budget: History.Budget | undefined
  readonly wait: Duration.Duration
}

/** The `thread` option checked, or `undefined` when there is none. */
export const threadOf = (
  action: string,
  option: string | ThreadOptions | undefined
): Result.Result<Thread | undefined, ValidationError> => {
  if (option === undefined) return Result.succeed(undefined)
  const given: ThreadOptions = typeof option === "string" ? { id: option } : option
  if (typeof given !== "object" || given === null || typeof given.id !== "string") {
    return Result.fail(ChatMessages.invalid(action, "thread", "thread must be a thread id or { id, budget?, wait? }"))
  }
  const budget = Window.checkBudget(action, given.budget)
  if (Result.isFailure(budget)) return Result.fail(budget.failure)
  const wait = given.wait === undefined ? Option.some(ThreadStore.defaultWait) : Duration.fromInput(given.wait)
  if (Option.isNone(wait) || Duration.toMillis(wait.value) < 0) {
    return Result.fail(ChatMessages.invalid(action, "thread.wait", "thread.wait must be a duration >= 0"))
  }
  return Result.succeed({ id: given.id, budget: budget.success, wait: wait.value })
}

const UserMessages = Schema.Struct({ input: Schema.Array(Prompt.Message) })

/** The new messages of a turn on a thread: the user's message, or a list of user messages. */
const inputOf = (
  input: string | ReadonlyArray<Prompt.Message>
): Effect.Effect<ReadonlyArray<Prompt.Message>, ValidationError> =>
  Effect.flatMap(
    typeof input === "string"
      ? Effect.succeed<ReadonlyArray<Prompt.Message>>([{ role: "user", content: input }])
      : Effect.map(Conversion.decode(UserMessages, { input }, { action: "chat" }), (decoded) => decoded.input),
    (messages) => {
      const other = messages.findIndex((message) => message.role !== "user")
      if (other !== -1) {
        return Effect.fail(
          ChatMessages.invalid(
            "chat",
            `input[${other}].role`,
            "with a thread, the input is the new user message: the thread holds the history"
          )
        )
      }
      if (messages.length === 0) return Effect.fail(ChatMessages.invalid("chat", "input", "the input is empty"))
      const length = messages.reduce((total, message) => total + message.content.length, 0)
      if (length > maxInputLength) {
        return Effect.fail(
          ChatMessages.invalid(
            "chat",
            "input",
            `the input is ${length} characters long; a turn on a thread takes at most ${maxInputLength}`
          )
        )
      }
      return Effect.succeed(messages)
    }
  )

/** The turn runs with the thread's messages, the ids every call of the thread has, and tokens spent before it. */
export type Run<R> = (
  messages: ReadonlyArray<Prompt.Message>,
  taken: ReadonlySet<string>,
  prior: Usage
) => Effect.Effect<ChatResult, ActionError, R>

/** The store of a turn: the one provided to the call, else the agent's. */
const storeOf = (fallback: () => ThreadStore.ThreadStore["Service"]) =>
  Effect.map(Effect.serviceOption(ThreadStore.ThreadStore), Option.getOrElse(fallback))

const label = (threadId: string) => `thread ${JSON.stringify(threadId)}`

const pendingList = (paused: Paused) =>
  paused.pending.map((call) => `${call.toolCallId} (${labelOf(call.action, call.tool)})`).join(", ")

/** The messages of `result` from `prefix` on: the turn's exchange. */
const exchangeOf = (result: ChatResult, prefix: number): ReadonlyArray<Prompt.Message> =>
  (result._tag === "AwaitingApproval" ? result.state.messages : result.messages).slice(prefix)

// A paused turn as the thread keeps it: its state without the history (the thread's rows hold it).
const pausedOf = (result: ChatResult, system: string, from: number, summary: boolean): Paused | undefined => {
  if (result._tag !== "AwaitingApproval") return undefined
  const { messages: _messages, ...kept } = result.state
  return { ...kept, system, from, summary }
}

/**
 * What a thread's rows keep of a turn: every text passes the redaction boundary (the secrets the agent knows
 * become `[REDACTED]`). A paused call whose arguments hold a secret is refused, naming the call: resuming it
 * needs its exact arguments, and the thread keeps no secret.
 */
const keptOf = <R>(
  host: Host<R>,
  action: string,
  messages: ReadonlyArray<Prompt.Message>,
  paused: Paused | undefined
): Effect.Effect<
  { readonly messages: ReadonlyArray<Prompt.Message>; readonly paused: Paused | undefined },
  ValidationError
> =>
  Effect.flatMap(Secrets.known(host.secrets), (secrets) => {
    if (secrets.length === 0) return Effect.succeed({ messages, paused })
    const holding = paused?.pending.find((call) => {
      const text = JSON.stringify(call.arguments)
      return Redact.text(text, secrets) !== text
    })
    if (holding !== undefined) {
      return Effect.fail(
        ChatMessages.invalid(
          action,
          "thread",
          `the paused call ${holding.action} (${holding.toolCallId}) has arguments that hold a secret of the agent; a thread keeps no secret, so this turn cannot pause on a thread`
        )
      )
    }
    return Effect.succeed({
      messages: Redact.value(messages, secrets) as ReadonlyArray<Prompt.Message>,
      paused: paused === undefined ? undefined : (Redact.value(paused, secrets) as Paused)
    })
  })

const idsOf = (index: ReadonlyArray<{ readonly callIds: ReadonlyArray<string> }>): ReadonlySet<string> => {
  const ids = new Set<string>()
  for (const entry of index) for (const id of entry.callIds) ids.add(id)
  return ids
}

/** A thread's history that is not a valid conversation (edited by hand, or by another program) cannot go on. */
const checkLoaded = (held: Held, messages: ReadonlyArray<Prompt.Message>) => {
  const problem = ChatMessages.checkHistory("chat", messages, new Set())
  return problem === undefined
    ? Effect.void
    : Effect.fail(
        new ExecutionFailure({
          action: "chat",
          message: `chat: the history of ${label(held.id)} is not a valid conversation: ${problem.issues[0]?.message ?? problem.message}`
        })
      )
}

/** The store's failure as the turn's error of the same category. */
const mapStore = <A, R>(effect: Effect.Effect<A, ActionError | StoreBoundary.StoreError, R>) =>
  Effect.mapError(
    effect,
    (error): ActionError => (error._tag === "StoreError" ? StoreBoundary.toActionError(error, "chat") : error)
  )

/** A new turn on `thread`: `input` is its new message, `system` its system message. */
export const start = <R>(
  host: Host<R>,
  fallback: () => ThreadStore.ThreadStore["Service"],
  thread: Thread,
  input: string | ReadonlyArray<Prompt.Message>,
  system: string,
  toolTokens: number,
  run: Run<R>
): Effect.Effect<ChatResult, ActionError, R> =>
  Effect.flatMap(Effect.zip(inputOf(input), storeOf(fallback)), ([news, store]) =>
    mapStore(
      store.hold(
        thread.id,
        (held) =>
          Effect.gen(function* () {
            const paused = held.head.paused
            if (paused !== undefined) {
              const first = paused.pending[0]
              return yield* new ApprovalRequired({
                action: first?.action ?? "chat",
                reason: first?.reason ?? "",
                check: "pending",
                ...(first === undefined ? {} : { pendingTokenId: first.pendingTokenId }),
                message: `chat: ${label(held.id)} waits for a decision on ${pendingList(paused)}; resume its paused turn (agent.resume with { thread }) before a new message`
              })
            }
            if (held.head.exchanges >= store.maxExchanges) {
              return yield* ChatMessages.invalid(
                "chat",
                "thread",
                `${label(held.id)} holds ${held.head.exchanges} exchanges, the most a thread of this store may; delete it or start another thread`
              )
            }
            const index = yield* held.index
            const head: Prompt.Message = { role: "system", content: system }
            const window = yield* Window.choose(host, held, index, thread.budget, [head, ...news], toolTokens)
            const prefix: Array<Prompt.Message> = [
              head,
              ...(window.summary === undefined ? [] : [History.summaryMessage(window.summary.text)]),
              ...window.exchanges.flatMap((exchange) => exchange.messages)
            ]
            yield* checkLoaded(held, prefix)
            const result = yield* run([...prefix, ...news], idsOf(index), window.usage)
            const kept = yield* keptOf(
              host,
              "chat",
              exchangeOf(result, prefix.length),
              pausedOf(result, system, window.from, window.summary !== undefined)
            )
            yield* held.write({
              exchange: { seq: held.head.exchanges + 1, messages: kept.messages },
              summary: window.summary,
              paused: kept.paused
            })
            return result
          }),
        { wait: thread.wait }
      )
    )
  )

/** The paused turn of `thread` resumed: `state` must be that turn; the thread's stored state is what resumes. */
export const resume = <R>(
  host: Host<R>,
  fallback: () => ThreadStore.ThreadStore["Service"],
  thread: Thread,
  state: PausedState,
  run: (state: PausedState, taken: ReadonlySet<string>) => Effect.Effect<ChatResult, ActionError, R>
): Effect.Effect<ChatResult, ActionError, R> =>
  Effect.flatMap(storeOf(fallback), (store) =>
    mapStore(
      store.hold(
        thread.id,
        (held) =>
          Effect.gen(function* () {
            const paused = held.head.paused
            if (paused === undefined) {
              return yield* ChatMessages.invalid("resume", "thread", `${label(held.id)} has no paused turn to resume`)
            }
            if (!samePending(state, paused)) {
              return yield* ChatMessages.invalid(
                "resume",
                "state",
                `the state is not the paused turn of ${label(held.id)} (it waits for ${pendingList(paused)}): a state resumed before, or of another thread`
              )
            }
            const index = yield* held.index
            const exchanges = yield* held.exchanges(paused.from, held.head.exchanges)
            const stored = pausedState(paused, held.head.summary, exchanges)
            const last = exchanges[exchanges.length - 1]
            const prefix = stored.messages.length - (last?.seq === held.head.exchanges ? last.messages.length : 0)
            const result = yield* run(stored, idsOf(index))
            const kept = yield* keptOf(
              host,
              "resume",
              exchangeOf(result, prefix),
              pausedOf(result, paused.system, paused.from, paused.summary)
            )
            yield* held.write({
              exchange: { seq: held.head.exchanges, messages: kept.messages },
              summary: held.head.summary,
              paused: kept.paused
            })
            return result
          }),
        { wait: thread.wait }
      )
    )
  )

/** Whether a caller's state waits for the same calls, under the same tokens, as the thread's paused turn. */
const samePending = (state: PausedState, paused: Paused): boolean => {
  const pending = (state as { readonly pending?: unknown }).pending
  if (!Array.isArray(pending) || pending.length !== paused.pending.length) return false
  return paused.pending.every((call, i) => {
    const given = pending[i] as { readonly toolCallId?: unknown; readonly pendingTokenId?: unknown } | undefined
    return given?.toolCallId === call.toolCallId && given.pendingTokenId === call.pendingTokenId
  })
}
