/**
 * What a durable run stores: its payload (the input and the chat options that are data), each step's
 * record — a model call's response (or its error) with the tools it was offered and the tokens spent, a tool
 * call's answer with its tokens — the verdict recorded for a pending call (a decision, or its token's
 * expiry) with the token it was made for, and the run's outcome.
 */
import { ActionError as ActionErrorUnion, Category } from "@rolecraft/core/ActionError"
import * as ActionResponse from "@rolecraft/core/ActionResponse"
import * as Chat from "@rolecraft/core/Chat"
import * as Decision from "@rolecraft/core/Decision"
import * as LanguageModel from "@rolecraft/core/LanguageModel"
import * as Prompt from "@rolecraft/core/Prompt"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import { stepName } from "./journal.ts"
import { ChatResult } from "./status.ts"

/** Chat options a run is started with (see `DurableChat.RunOptions`). */
export const RunOptions = Schema.Struct({
  maxSteps: Schema.optionalKey(Schema.Int),
  system: Schema.optionalKey(Schema.String),
  concurrency: Schema.optionalKey(Schema.Int),
  model: Schema.optionalKey(Schema.String),
  temperature: Schema.optionalKey(Schema.Finite),
  strict: Schema.optionalKey(Schema.Boolean)
})

/** A run's input: a user message, or a history. */
export const Input = Schema.Union([Schema.String, Schema.Array(Prompt.Message)])

/** A decision on a pending call: `Chat.approve(approver)` or `Chat.reject(approver, reason)`. */
export const DecisionSchema = Decision.Decision
/** What ends a pending call's wait: a decision, or its approval token's expiry. */
export const Verdict = Schema.Union([Decision.Approve, Decision.Reject, Schema.TaggedStruct("Expired", {})])
export type Verdict = typeof Verdict.Type

/**
 * The verdict recorded for a pending call, once: the first of a decision (recorded by `decide`) and its
 * token's expiry (recorded by the run) stands. `pendingTokenId` binds it to the call it was made for.
 */
export const VerdictRecord = Schema.Struct({ verdict: Verdict, pendingTokenId: Schema.String })
export type VerdictRecord = typeof VerdictRecord.Type

/** How a run ends: the chat's result, a failure with its category, or cancelled. */
export const Outcome = Schema.Union([
  ChatResult,
  Schema.TaggedStruct("Failed", { category: Category, message: Schema.String }),
  Schema.TaggedStruct("Cancelled", {})
])
export type Outcome = typeof Outcome.Type

const UsageSchema = ActionResponse.UsageSchema

const ResponseSchema = Schema.Struct({
  text: Schema.String,
  toolCalls: Schema.Array(Prompt.ToolCall),
  usage: UsageSchema,
  finishReason: Schema.Literals(["stop", "length", "tool_calls", "content_filter", "other"]),
  model: Schema.optional(Schema.String),
  refusal: Schema.optional(Schema.String),
  // What the model's reply carries besides its text: a replayed step must hand the chat the same answer, so the
  // assistant message it keeps has the same reasoning and what its provider needs back (signed thinking blocks).
  reasoning: Schema.optional(Schema.String),
  reasoningField: Schema.optional(Schema.String),
  providerData: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})

/**
 * What a model call step records: the names of the tools it was offered (a replay offers and routes the same),
 * and its response with the tokens spent inside it, or its error.
 */
export const ModelRecord = Schema.Struct({
  tools: Schema.Array(Schema.String),
  result: Schema.Union([
    Schema.TaggedStruct("Response", { value: ResponseSchema, usage: UsageSchema }),
    Schema.TaggedStruct("Error", { error: ActionErrorUnion })
  ])
})
export type ModelRecord = typeof ModelRecord.Type

/** What a tool call step records: its answer and the tokens spent inside it. */
export const ToolRecord = Schema.Struct({ value: Chat.ToolAnswer, usage: UsageSchema })

/** Runs `effect` with a usage meter of its own and returns its value with the tokens it spent. */
export const metered = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly value: A; readonly usage: LanguageModel.Usage }, E, R> =>
  Effect.gen(function* () {
    // Not nested in the turn's meter: the tokens are recorded there once, from the stored record.
    const meter = yield* Effect.provideService(LanguageModel.makeUsageMeter, LanguageModel.UsageMeter, {
      record: () => Effect.void,
      total: Effect.succeed({ usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, calls: 0 })
    })
    const value = yield* Effect.provideService(effect, LanguageModel.UsageMeter, meter)
    return { value, usage: (yield* meter.total).usage }
  })

/** Adds a step's tokens to the turn's usage meter, if there is one. */
export const recordUsage = (usage: LanguageModel.Usage): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(LanguageModel.UsageMeter), (meter) =>
    Option.isSome(meter) ? meter.value.record(usage) : Effect.void
  )

/** The durable deferred that wakes the run when `toolCallId` of its `segment`-th pause is decided. */
export const approvalOf = (segment: number, toolCallId: string) =>
  DurableDeferred.make(stepName("approval", segment, toolCallId), { success: DecisionSchema })
