/**
 * A durable run's status as the run store keeps it (see `RunStore.RunStatus`), and the chat result a done
 * run holds.
 */
import * as Category from "@rolecraft/core/ActionError"
import * as ActionResponse from "@rolecraft/core/ActionResponse"
import * as Chat from "@rolecraft/core/Chat"
import * as Prompt from "@rolecraft/core/Prompt"
import * as Schema from "effect/Schema"

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const Usage = ActionResponse.UsageSchema

/** The schema of a `Chat.ChatResult` (what a durable run stores and returns). */
export const ChatResult = Schema.Union([
  Schema.Struct({
    _tag: Schema.Literal("Completed"),
    text: Schema.String,
    messages: Schema.Array(Prompt.Message),
    usage: Usage,
    steps: NonNegativeInt,
    finishReason: Schema.Literals(["stop", "length", "tool_calls", "content_filter", "other"])
  }),
  Schema.Struct({
    _tag: Schema.Literal("AwaitingApproval"),
    pending: Schema.Array(Chat.PendingCall),
    state: Chat.PausedState
  }),
  Schema.Struct({
    _tag: Schema.Literal("StepLimitReached"),
    messages: Schema.Array(Prompt.Message),
    usage: Usage,
    steps: NonNegativeInt
  })
])

/** A durable run's status (see `RunStore.RunStatus`). */
export const RunStatus = Schema.Union([
  Schema.TaggedStruct("Running", {}),
  Schema.TaggedStruct("AwaitingApproval", { pending: Schema.Array(Chat.PendingCall), segment: NonNegativeInt }),
  Schema.TaggedStruct("Done", { result: ChatResult }),
  Schema.TaggedStruct("Failed", { category: Category.Category, message: Schema.String }),
  Schema.TaggedStruct("Cancelled", {})
])

export type RunStatus = typeof RunStatus.Type

/** Whether a status is final (done, failed or cancelled). */
export const isFinal = (status: RunStatus): boolean =>
  status._tag === "Done" || status._tag === "Failed" || status._tag === "Cancelled"
