/**
 * The conversation a language model is given: a list of messages — the
 * system's instructions, the user's words, the model's own replies with the
 * tool calls they made, and the answer to each tool call. Each message is a
 * schema, so a history handed back by a caller (a chat's `messages`, a
 * stored run) can be decoded before it is used; decoding refuses a message
 * whose `role` is unknown or whose fields are missing or of the wrong type.
 *
 * @example
 * ```ts
 * import { Prompt } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * // a history read back from storage, checked before it is given to a model
 * const decodeHistory = Schema.decodeUnknownEffect(Schema.Array(Prompt.Message))
 * const history = decodeHistory(JSON.parse('[{"role":"user","content":"Three things to see in Lisbon?"}]'))
 * ```
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/**
 * A tool call as the model sent it: the call's `id` (answered by exactly one
 * {@link ToolMessage}), the model-facing tool `name` (one of the request's
 * tools: `ActionTool.ActionTool`'s `name`) and the raw `arguments` string exactly as sent —
 * possibly `""`, malformed or not an object (the agent parses it strictly and
 * answers a malformed one with a VALIDATION tool message).
 *
 * @category schemas
 * @since 0.2.0
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

/**
 * @category models
 * @since 0.2.0
 */
export type ToolCall = typeof ToolCall.Type

/**
 * The system message: instructions for the whole exchange.
 *
 * @category schemas
 * @since 0.2.0
 */
export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.String
})

/**
 * @category models
 * @since 0.2.0
 */
export type SystemMessage = typeof SystemMessage.Type

/**
 * A user message.
 *
 * @category schemas
 * @since 0.2.0
 */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.String
})

/**
 * @category models
 * @since 0.2.0
 */
export type UserMessage = typeof UserMessage.Type

/**
 * A reply of the model: its text (`""` when it only called tools), the tool
 * calls it made, if any, and the reasoning it gave before, when the provider
 * sent it (`reasoning`, never part of `content`; `reasoningField` is the
 * provider's name for it, so a provider that needs it back on the next
 * request gets it in that field — see the provider's docs), and what the
 * provider attached to it to be sent back unchanged (`providerData`, keyed by
 * the provider's name, e.g. Anthropic's signed thinking blocks; read only by
 * that provider).
 *
 * @category schemas
 * @since 0.2.0
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.String,
  toolCalls: Schema.optionalKey(Schema.Array(ToolCall)),
  reasoning: Schema.optionalKey(Schema.String),
  reasoningField: Schema.optionalKey(Schema.String),
  providerData: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})

/**
 * @category models
 * @since 0.2.0
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * The answer to one tool call: `toolCallId` is the call's `id`, `content`
 * the result (or `{"error":{…}}`) as text.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: Schema.String,
  content: Schema.String
})

/**
 * @category models
 * @since 0.2.0
 */
export type ToolMessage = typeof ToolMessage.Type

/**
 * Any message of a conversation. A schema, so a message list handed back by
 * a caller (a chat history) can be decoded before it is used.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Prompt } from "@rolecraft/core"
 *
 * const history = Schema.decodeUnknownSync(Schema.Array(Prompt.Message))([
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "How many nights from 12 to 15 May?" }
 * ])
 * ```
 *
 * @category schemas
 * @since 0.2.0
 */
export const Message = Schema.Union([SystemMessage, UserMessage, AssistantMessage, ToolMessage])

/**
 * @category models
 * @since 0.2.0
 */
export type Message = typeof Message.Type
