/**
 * The tour's chat step: one turn of `agent.chat`, then what happened in it —
 * each tool call the model made, of which kind, with which arguments, and its
 * answer; how many model calls; the tokens — as a transcript outcome whose
 * `facts` say what must hold:
 *
 * - whatever the model: the turn did not crash, every tool call got exactly
 *   one answer, usage was counted;
 * - with the offline scripted model, also: it completed, with tool calls of
 *   three kinds (local, webService, mcpTool) that all succeeded, and an
 *   answer built from their results.
 *
 * A real model may call `book`, which needs approval: the turn then pauses
 * (`AwaitingApproval`) and the tour resumes it, rejecting the booking (the
 * tour books only with a person's approval, in its approval steps).
 */
import { type ActionError, type Agent, Chat, type Prompt, Role } from "@rolecraft/core"
import { Effect, Schema, Stream } from "effect"
import type * as Transcript from "./transcript.ts"

/** One tool call of the turn with its answers. */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly kind: string
  readonly arguments: string
  readonly answers: ReadonlyArray<string>
}

/** A tool message's error, when it is one (`{"error":{"category","message"}}`). */
const errorOf = (content: string): { readonly category: string; readonly message: string } | undefined => {
  try {
    const parsed: unknown = JSON.parse(content)
    if (typeof parsed !== "object" || parsed === null || !("error" in parsed)) return undefined
    const error = parsed.error as { readonly category?: unknown; readonly message?: unknown }
    return { category: String(error.category), message: String(error.message) }
  } catch {
    return undefined
  }
}

const isError = (content: string): boolean => errorOf(content) !== undefined

/** The tool calls of a conversation, each with every tool message answering it. */
export const toolCalls = (
  messages: ReadonlyArray<Prompt.Message>,
  kindOf: (name: string) => string
): ReadonlyArray<ToolCall> => {
  const calls: Array<ToolCall> = []
  for (const message of messages) {
    if (message.role !== "assistant") continue
    for (const call of message.toolCalls ?? []) {
      const answers = messages.flatMap((m) => (m.role === "tool" && m.toolCallId === call.id ? [m.content] : []))
      calls.push({ id: call.id, name: call.name, kind: kindOf(call.name), arguments: call.arguments, answers })
    }
  }
  return calls
}

/** The action type behind a model-facing tool name: an action's own, or `mcpTool` for `<action>_<tool>`. */
export const kindOf =
  (roles: ReadonlyArray<Role.Any>) =>
  (name: string): string => {
    const entries = roles.flatMap((role) => Role.actions(role))
    const own = entries.find((entry) => entry.name === name)
    if (own !== undefined) return own.action._tag
    const mcp = entries.find((entry) => entry.action._tag === "mcpTool" && name.startsWith(`${entry.name}_`))
    return mcp === undefined ? "unknown tool" : "mcpTool"
  }

const clip = (text: string, width: number) =>
  text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`

const messagesOf = (result: Chat.ChatResult) =>
  result._tag === "AwaitingApproval" ? result.state.messages : result.messages

const outcomeOf = (result: Chat.ChatResult, rejected: number, kind: (name: string) => string): Transcript.Outcome => {
  const calls = toolCalls(messagesOf(result), kind)
  const usage = result._tag === "AwaitingApproval" ? result.state.usage : result.usage
  const steps = result._tag === "AwaitingApproval" ? result.state.steps : result.steps
  const failed = calls.filter((call) => call.answers.some(isError)).length
  const count = (type: string) => calls.filter((call) => call.kind === type && !call.answers.some(isError)).length
  const text = result._tag === "Completed" ? result.text : ""
  const notes = [
    ...calls.map((call) => {
      const answer =
        call.answers.length === 0
          ? "no answer!"
          : call.answers.map((content) => {
              const error = errorOf(content)
              return error === undefined ? content : `✗ ${error.category}: ${error.message}`
            })
      return clip(`→ ${call.name} (${call.kind}) ${clip(call.arguments, 48)} ⇒ ${[answer].flat().join(" | ")}`, 100)
    }),
    ...(rejected === 0 ? [] : [`${rejected} call${rejected === 1 ? "" : "s"} needing approval rejected by the tour`]),
    ...(result._tag === "Completed" ? [`answer: ${text}`] : [])
  ]
  return {
    ok: true,
    value: `${result._tag} after ${steps} model call${steps === 1 ? "" : "s"}, ${calls.length} tool call${calls.length === 1 ? "" : "s"}`,
    usage,
    notes,
    facts: {
      completed: result._tag === "Completed" ? 1 : 0,
      toolCalls: calls.length,
      answeredOnce: calls.filter((call) => call.answers.length === 1).length,
      failed,
      local: count("local"),
      webService: count("webService"),
      mcpTool: count("mcpTool"),
      usageCounted: [usage.inputTokens, usage.outputTokens, usage.totalTokens].every(Number.isInteger) ? 1 : 0,
      answerUsesResults: /\b3 nights\b/.test(text) && text.includes("Casa Alfama") && text.includes("tram") ? 1 : 0
    }
  }
}

/**
 * Runs one chat turn; a turn paused for approval is resumed with every
 * pending call rejected (at most 5 times). A failure of the turn itself
 * (the model call failed) is reported as its category.
 */
export const turn = <A, R>(
  agent: Chat.Turns<R> & Pick<Agent.Agent<A>, "roles">,
  input: string,
  options: Chat.ChatOptions
): Effect.Effect<Transcript.Outcome, never, R> => {
  const kind = kindOf(agent.roles)
  const settle = (result: Chat.ChatResult, rejected: number): Effect.Effect<Transcript.Outcome, never, R> => {
    if (result._tag !== "AwaitingApproval" || rejected >= 5) return Effect.succeed(outcomeOf(result, rejected, kind))
    const decisions = Object.fromEntries(
      result.pending.map((call) => [call.toolCallId, Chat.reject("tour", "the tour books only in its approval steps")])
    )
    return agent.resume(result.state, decisions).pipe(
      Effect.flatMap((next) => settle(next, rejected + result.pending.length)),
      Effect.catch((error) => Effect.succeed(failure(error)))
    )
  }
  return agent.chat(input, options).pipe(
    Effect.flatMap((result) => settle(result, 0)),
    Effect.catch((error) => Effect.succeed(failure(error)))
  )
}

const failure = (error: { readonly category: string; readonly message: string }): Transcript.Outcome => ({
  ok: false,
  category: error.category,
  message: error.message
})

/** What must hold of the turn whatever the model said. */
export const mustAlways = (outcome: Transcript.Outcome): string | undefined => {
  if (!outcome.ok) return `the turn failed with ${outcome.category}: ${outcome.message}`
  const facts = outcome.facts ?? {}
  if (facts.answeredOnce !== facts.toolCalls) {
    return `every tool call must get exactly one answer: ${facts.answeredOnce} of ${facts.toolCalls} did`
  }
  if (facts.usageCounted !== 1) return "the turn's token usage was not counted"
  return undefined
}

/** What must also hold with the offline scripted model, whose script is known. */
export const mustOffline = (outcome: Transcript.Outcome): string | undefined => {
  const always = mustAlways(outcome)
  if (always !== undefined) return always
  const facts = outcome.facts ?? {}
  if (facts.completed !== 1) return "expected the turn to complete with an answer"
  if ((facts.local ?? 0) < 1 || (facts.webService ?? 0) < 1 || (facts.mcpTool ?? 0) < 1) {
    return "expected successful tool calls of three kinds: local, webService and mcpTool"
  }
  if ((facts.failed ?? 0) > 0) return `expected every tool call to succeed; ${facts.failed} failed`
  if (facts.answerUsesResults !== 1) return "expected the answer to use the tools' results"
  return undefined
}

/** A streamed turn's record: its result, the text deltas of its last step, and how many deltas in all. */
interface Streamed {
  readonly result: Chat.ChatResult
  readonly deltas: number
  readonly lastText: string
  readonly finished: number
}

/**
 * The streamed step: `agent.chatStream`, each text delta printed as it
 * arrives, each tool call as it starts and as it is answered; a turn paused
 * for approval is resumed (`agent.resumeStream`) with every pending call
 * rejected, as in {@link turn}.
 */
export const streamed = <A, R>(
  agent: Chat.Turns<R> & Pick<Agent.Agent<A>, "roles">,
  input: string,
  options: Chat.ChatOptions
): Effect.Effect<Transcript.Outcome, never, R> => {
  const write = (text: string) => Effect.sync(() => void process.stdout.write(text))
  const record = { deltas: 0, lastText: "", finished: 0, inText: false }
  const tools = new Map<string, string>()
  const print = (event: Chat.ChatEvent): Effect.Effect<void> => {
    switch (event._tag) {
      case "StepStarted":
        record.lastText = ""
        return Effect.void
      case "TextDelta": {
        record.deltas += 1
        record.lastText += event.delta
        const first = !record.inText
        record.inText = true
        return write(first ? `     ▸ ${event.delta}` : event.delta)
      }
      case "ToolCallArgumentsStarted": {
        const close = record.inText ? "\n" : ""
        record.inText = false
        tools.set(event.toolCallId, event.tool)
        return write(`${close}     → ${event.tool} started\n`)
      }
      case "ToolCallAnswered": {
        const outcome = event.success ? `✓ ${clip(event.content, 60)}` : `✗ ${event.category ?? "failed"}`
        return write(`     ← ${tools.get(event.toolCallId) ?? event.toolCallId} ${outcome}\n`)
      }
      case "TurnFinished": {
        record.finished += 1
        const close = record.inText ? "\n" : ""
        record.inText = false
        return write(close)
      }
      default:
        return Effect.void
    }
  }
  const run = (events: Stream.Stream<Chat.ChatEvent, ActionError.ActionError, R>) =>
    Stream.runFold(
      events,
      (): Chat.ChatResult | undefined => undefined,
      (last, event) => (event._tag === "TurnFinished" ? event.result : last)
    )
  const settle = (
    events: Stream.Stream<Chat.ChatEvent, ActionError.ActionError, R>,
    rejected: number
  ): Effect.Effect<Streamed, ActionError.ActionError, R> =>
    Effect.flatMap(run(Stream.tap(events, print)), (result) => {
      if (result === undefined) return Effect.die(new Error("the stream ended without TurnFinished"))
      if (result._tag !== "AwaitingApproval" || rejected >= 5) {
        return Effect.succeed({ result, deltas: record.deltas, lastText: record.lastText, finished: record.finished })
      }
      const decisions = Object.fromEntries(
        result.pending.map((call) => [
          call.toolCallId,
          Chat.reject("tour", "the tour books only in its approval steps")
        ])
      )
      return settle(agent.resumeStream(result.state, decisions), rejected + result.pending.length)
    })
  return settle(agent.chatStream(input, options), 0).pipe(
    Effect.map(({ result, deltas, lastText, finished }): Transcript.Outcome => {
      const steps = result._tag === "AwaitingApproval" ? result.state.steps : result.steps
      const text = result._tag === "Completed" ? result.text : ""
      return {
        ok: true,
        value: `${result._tag} after ${steps} model call${steps === 1 ? "" : "s"}, ${deltas} text deltas`,
        usage: result._tag === "AwaitingApproval" ? result.state.usage : result.usage,
        facts: {
          completed: result._tag === "Completed" ? 1 : 0,
          deltas,
          finished,
          textFromDeltas: result._tag === "Completed" && lastText === text ? 1 : 0
        }
      }
    }),
    Effect.catch((error) => Effect.succeed(failure(error)))
  )
}

/** What must hold of a streamed turn whatever the model said: it ended, once (with each resumed part). */
export const mustStreamAlways = (outcome: Transcript.Outcome): string | undefined => {
  if (!outcome.ok) return `the streamed turn failed with ${outcome.category}: ${outcome.message}`
  return (outcome.facts?.finished ?? 0) >= 1 ? undefined : "the stream never said the turn finished"
}

/** With the offline model also: it completed, its answer came in several deltas, and they join to the text. */
export const mustStreamOffline = (outcome: Transcript.Outcome): string | undefined => {
  const always = mustStreamAlways(outcome)
  if (always !== undefined) return always
  const facts = outcome.facts ?? {}
  if (facts.completed !== 1 || facts.finished !== 1) return "expected the turn to complete, with one TurnFinished"
  if ((facts.deltas ?? 0) < 2) return "expected the answer in more than one text delta"
  if (facts.textFromDeltas !== 1) return "expected the last step's deltas to join to the answer"
  return undefined
}

/** The structured step's schema: the trip in three fields. */
export const TripSummary = Schema.Struct({
  city: Schema.String,
  nights: Schema.Int,
  cheapestHotel: Schema.optionalKey(Schema.String)
})

/**
 * The structured-output step: `agent.chat(input, { output: TripSummary })`;
 * the outcome's value is the decoded output (typed `TripSummary`).
 */
export const structured = <A, R>(
  agent: Chat.Turns<R> & Pick<Agent.Agent<A>, "roles">,
  input: string
): Effect.Effect<Transcript.Outcome, never, R> =>
  agent.chat(input, { output: TripSummary, maxSteps: 4 }).pipe(
    Effect.map((result): Transcript.Outcome => {
      if (result._tag !== "Completed") return { ok: true, value: `${result._tag} (no output)`, facts: { output: 0 } }
      const output: typeof TripSummary.Type = result.output
      return {
        ok: true,
        value: output,
        usage: result.usage,
        notes: [`the model's answer: ${result.text}`],
        facts: { output: 1, nights: output.nights, lisbon: output.city === "Lisbon" ? 1 : 0 }
      }
    }),
    Effect.catch((error) => Effect.succeed(failure(error)))
  )

/** Whatever the model: the turn did not fail (an answer that does not match would be VALIDATION). */
export const mustStructuredAlways = (outcome: Transcript.Outcome): string | undefined =>
  outcome.ok ? undefined : `the structured turn failed with ${outcome.category}: ${outcome.message}`

/** With the offline model: the output decoded to Lisbon, 3 nights (its null cheapest hotel left out). */
export const mustStructuredOffline = (outcome: Transcript.Outcome): string | undefined => {
  const always = mustStructuredAlways(outcome)
  if (always !== undefined) return always
  const facts = outcome.facts ?? {}
  return facts.output === 1 && facts.nights === 3 && facts.lisbon === 1
    ? undefined
    : "expected the output { city: Lisbon, nights: 3 }"
}
