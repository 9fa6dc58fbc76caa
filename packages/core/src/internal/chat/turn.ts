/**
 * An agent's chat turns, wired: a new turn (its settings, history, model and usage meter, then the loop), a
 * resumed one (the paused state checked, its decisions carried out, then the loop), each in its
 * `invoke_agent` span, run to a result (`chat`, `resume`) or as a stream of events (`chatStream`,
 * `resumeStream`). Each part is its own module; this one only puts them together, once per agent.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as History from "../../History.ts"
import type { ActionError } from "../../ActionError.ts"
import {
  type ChatOptions,
  type ChatResult,
  type Decisions,
  type Input,
  type PausedState,
  systemPrompt,
  type Turns,
  type Usage
} from "../../Chat.ts"
import * as ApprovalStore from "../../ApprovalStore.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type * as Prompt from "../../Prompt.ts"
import * as ToolCallId from "../../ToolCallId.ts"
import * as Telemetry from "../events/telemetry.ts"
import * as Redact from "../redact.ts"
import * as Secrets from "../secrets.ts"
import * as Nesting from "../agent/nesting.ts"
import * as AgentTools from "../agent/tools.ts"
import * as ThreadStore from "../../ThreadStore.ts"
import type { Host, Mode, Turn } from "./context.ts"
import { loop } from "./loop.ts"
import * as ChatMessages from "./messages.ts"
import * as Resume from "./resume.ts"
import { chatAction, modelName, requireModel, type Settings, settingsOf } from "./settings.ts"
import * as TurnStream from "./stream.ts"
import * as Threads from "./thread.ts"

export type { Host } from "./context.ts"

const zero: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

// A turn's id needs to be unique, not secret: a random prefix drawn once per process, then a count. Drawing 192
// random bits per turn would cost a chat turn more than the rest of its bookkeeping.
let turnPrefix: string | undefined
let turnCount = 0
const freshTurnId = (): string => {
  turnPrefix ??= ApprovalStore.newTokenId().slice(0, 16)
  turnCount += 1
  return `${turnPrefix}-${turnCount}`
}

/** Runs `body` with a fresh usage meter for the turn (nested in any meter already there). */
const metered = <A, R>(
  body: (meter: LanguageModel.UsageMeter["Service"]) => Effect.Effect<A, ActionError, R>
): Effect.Effect<A, ActionError, R> =>
  Effect.flatMap(LanguageModel.makeUsageMeter, (meter) =>
    Effect.provideService(body(meter), LanguageModel.UsageMeter, meter)
  )

const turnEnd = (result: ChatResult): Telemetry.TurnEnd => {
  const usage = result._tag === "AwaitingApproval" ? result.state.usage : result.usage
  return {
    result: result._tag,
    steps: result._tag === "AwaitingApproval" ? result.state.steps : result.steps,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(usage.cachedInputTokens === undefined ? {} : { cachedInputTokens: usage.cachedInputTokens }),
    ...(usage.cacheWriteInputTokens === undefined ? {} : { cacheWriteInputTokens: usage.cacheWriteInputTokens }),
    ...(usage.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
    finishReason: result._tag === "Completed" ? result.finishReason : undefined
  }
}

/** A turn whose model calls scrub their errors of the secrets it knows, before their spans record them. */
const knowing = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  secrets: ReadonlyArray<Redacted.Redacted<string>>
): Effect.Effect<A, E, R> =>
  secrets.length === 0 && !Secrets.learns(secrets)
    ? self
    : Effect.provideService(self, Redact.Known, Effect.succeed(secrets))

/** The tokens a paused turn recorded of other agents (its own are what is left of its total). */
const othersOf = (agents: Readonly<Record<string, Usage>> | undefined, self: string): Record<string, Usage> => {
  const { [self]: _own, ...others } = agents ?? {}
  return others
}

/**
 * Builds an agent's chat turns (`Agent.make` calls it once per agent, on its first chat): what `agent.chat`,
 * `agent.resume`, `agent.chatStream` and `agent.resumeStream` delegate to.
 *
 * - `chat(input, options)`: `input` is the user's message, or a message list
 *   from an earlier turn (decoded with `Prompt.Message`; every tool
 *   call in it must be answered once; without a system message one is put
 *   first). Tool call ids are unique across the whole conversation
 *   (`ToolCallId`): an empty or repeated id, in the list or in a model's
 *   answer, gets a fresh one, in its call and in its tool message.
 * - `resume(state, decisions, options)`: one decision per pending call,
 *   each recorded in the store — the `ApprovalStore` provided to the call,
 *   else the agent's — for the call as the state shows it (agent, action,
 *   exact arguments) before any call runs. Approved: the call runs with its
 *   token; rejected: the model gets an APPROVAL error with the reason; a
 *   token the store refuses to approve (expired, unknown, bound to another
 *   call, already used) is answered with that APPROVAL error and the call
 *   does not run. Then the turn continues. A call is decided once: resuming
 *   a state again with the same decisions is those decisions (an approved
 *   call then finds its token used), while another decision for a call
 *   already decided fails the resume with APPROVAL (`check: "decided"`,
 *   "call_2 (book) is already decided: approved by ann") before anything
 *   runs or the model is called.
 *
 * Both fail with an `ActionError` only when the turn itself cannot go on:
 * VALIDATION for bad options, history, state or decisions (an approver or
 * reason the store cannot hold, too), or "LanguageModel not provided"; a
 * model call's failure (after `options.retry`); the store's TRANSIENT or
 * EXECUTION failure while recording a decision; APPROVAL for a decision on
 * a call decided otherwise. A tool
 * call's failure never fails the turn: it becomes that call's tool message,
 * `{"error":{"category","message"}}` (`"RETRIEVAL"` for a knowledge
 * retrieval failure). Interruption stops the turn and its tool calls.
 *
 * - `chatStream`, `resumeStream`: the same turns as streams of chat events,
 *   `TurnFinished` last; `chat` and `resume` run the same loop to the same
 *   result, but call the model without streaming and make no events, while
 *   the streams stream each model call. Stopping the stream
 *   (interrupting it, or no longer pulling) stops the turn: the model's HTTP
 *   stream is aborted, running tool calls are interrupted, and no partial
 *   text is kept anywhere.
 */
export const make = <R>(host: Host<R>): Turns<R> => {
  const system = systemPrompt(host.id, host.roles)
  const toolkit = AgentTools.make(host, { expandMcp: true })

  /** A turn (or its resumption) in its `invoke_agent` span. */
  const span = (options: ChatOptions | undefined, resumed: boolean) =>
    Telemetry.invokeAgent({ agentId: host.id, model: modelName(options, host.roles), resumed }, turnEnd)

  // A thread kept by no store of the caller's is kept by the agent's own, made on its first thread turn.
  let own: ThreadStore.ThreadStore["Service"] | undefined
  const threads = () => host.threads ?? (own ??= ThreadStore.makeMemory())

  /** The loop of a turn from `messages`, whose conversation's calls also have the ids `taken`. */
  const begin = (
    settings: Settings,
    model: LanguageModel.LanguageModel["Service"],
    at: {
      readonly messages: ReadonlyArray<Prompt.Message>
      readonly steps: number
      readonly agents?: Readonly<Record<string, Usage>> | undefined
      readonly turnId?: string | undefined
    },
    prior: Usage,
    mode: Mode,
    taken: ReadonlySet<string> | undefined,
    body: (turn: Turn<R>) => Effect.Effect<ChatResult, ActionError, R>
  ): Effect.Effect<ChatResult, ActionError, R> =>
    // The turn's secrets: its agent's, its model's, and the MCP client's — those it obtains during the turn too.
    Effect.flatMap(Secrets.learning(Secrets.withModel(host.secrets, model)), (secrets) =>
      metered((meter) => {
        // Where the turn runs, when it is nested (read in the turn's own fiber, which runs this).
        const place = Fiber.getCurrent()?.getRef(Nesting.CurrentPlace)
        const callIds = new Set(taken)
        for (const id of ToolCallId.idsOf(at.messages)) callIds.add(id)
        // A handed-off turn's calls get ids unique across the whole conversation it continues.
        for (const id of place?.taken ?? []) callIds.add(id)
        const composed = {
          bound: undefined,
          outermost: place === undefined,
          calls: at.steps,
          agents: othersOf(at.agents, host.id)
        }
        const id = at.turnId ?? settings.turnId ?? freshTurnId()
        const path = place?.path ?? [host.id]
        // The turn's id and its agents' path on its `invoke_agent` span: what ties a pending approval (scoped
        // to the turn) and a nested agent's turn to the trace.
        return Effect.andThen(
          Effect.annotateCurrentSpan({ "rolecraft.turn.id": id, "rolecraft.agent.path": path }),
          knowing(
            body({ host, id, path, toolkit, settings, model, meter, prior, callIds, secrets, composed, ...mode }),
            secrets
          )
        )
      })
    )

  /** A turn in its span, its error exit scrubbed of every secret the agent knows (read only when it fails). */
  const exiting =
    (options: ChatOptions | undefined, resumed: boolean) =>
    (self: Effect.Effect<ChatResult, ActionError, R>): Effect.Effect<ChatResult, ActionError, R> =>
      span(options, resumed)(Secrets.redacting(self, host.secrets))

  const start = (
    input: string | ReadonlyArray<Prompt.Message>,
    options: ChatOptions | undefined,
    mode: Mode
  ): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.suspend(() => {
      const settings = settingsOf(options, host.roles, 10)
      if (Result.isFailure(settings)) return Effect.fail(settings.failure)
      const thread = Threads.threadOf(chatAction, options?.thread)
      if (Result.isFailure(thread)) return Effect.fail(thread.failure)
      const first = options?.system ?? system
      const run = (
        model: LanguageModel.LanguageModel["Service"],
        messages: ReadonlyArray<Prompt.Message>,
        prior: Usage,
        taken?: ReadonlySet<string>
      ) =>
        begin(settings.success, model, { messages, steps: 0 }, prior, mode, taken, (turn) =>
          loop(turn, { messages, steps: 0 })
        )
      if (thread.success !== undefined) {
        const kept = thread.success
        // The tool schemas every request carries count in the thread's budget, as the system message does.
        const toolTokens =
          kept.budget === undefined
            ? Effect.succeed(0)
            : Effect.map(toolkit(settings.success.strict), (kit) => History.estimateToolTokens(kit.forModel))
        return Effect.flatMap(Effect.zip(requireModel, toolTokens), ([model, tools]) =>
          Threads.start(host, threads, kept, input, first, tools, (messages, taken, prior) =>
            run(model, messages, prior, taken)
          )
        )
      }
      const history: Effect.Effect<ReadonlyArray<Prompt.Message>, ActionError> = typeof input === "string"
        ? Effect.succeed([
            { role: "system", content: first },
            { role: "user", content: input }
          ])
        : ChatMessages.historyOf(chatAction, input, first)
      return Effect.flatMap(Effect.zip(requireModel, history), ([model, messages]) => run(model, messages, zero))
    }).pipe(exiting(options, false))

  const proceed = (
    raw: PausedState,
    decisions: Decisions,
    options: ChatOptions | undefined,
    mode: Mode
  ): Effect.Effect<ChatResult, ActionError, R> =>
    Effect.suspend(() => {
      const thread = Threads.threadOf("resume", options?.thread)
      if (Result.isFailure(thread)) return Effect.fail(thread.failure)
      const go = (given: PausedState, taken?: ReadonlySet<string>) =>
        Effect.flatMap(Resume.check(given, decisions), ({ state, calls }) => {
          const settings = settingsOf(options, host.roles, state.maxSteps)
          if (Result.isFailure(settings)) return Effect.fail(settings.failure)
          return Effect.flatMap(requireModel, (model) =>
            begin(settings.success, model, state, state.usage, mode, taken, (turn) =>
              Resume.resume(turn, state, calls, decisions)
            )
          )
        })
      return thread.success === undefined ? go(raw) : Threads.resume(host, threads, thread.success, raw, go)
    }).pipe(exiting(options, true))

  return {
    // One boundary cast: with an `output` schema, a completed result carries the decoded output.
    chat: ((input: Input, options?: ChatOptions) => start(input, options, TurnStream.unstreamed)) as Turns<R>["chat"],
    resume: ((state: PausedState, decisions: Decisions, options?: ChatOptions) =>
      proceed(state, decisions, options, TurnStream.unstreamed)) as Turns<R>["resume"],
    chatStream: (input, options) =>
      TurnStream.events((mode) => start(input, options, mode), options?.argumentDeltas ?? false),
    resumeStream: (state, decisions, options) =>
      TurnStream.events((mode) => proceed(state, decisions, options, mode), options?.argumentDeltas ?? false)
  }
}
