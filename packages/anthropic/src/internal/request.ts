/**
 * The Messages API request a model request becomes: system messages as the
 * `system` blocks; user messages as `user` text; the answers to tool calls as
 * `tool_result` blocks, every answer of one step in one `user` message (a
 * user message that follows joins it, after the results; an empty or
 * whitespace-only user text is left out, as the API refuses it); an assistant
 * message as its signed thinking blocks first (the `thinking` and
 * `redacted_thinking` blocks it came with, kept under `providerData.anthropic`
 * and sent back exactly as received), then its text (left out when empty —
 * the API refuses an empty text block) and its `tool_use` blocks. Tools are
 * `input_schema` tools, `toolChoice` is `auto` / `none` / `any` / `tool`
 * (with `disable_parallel_tool_use: true` when the request asks for no
 * parallel calls), a
 * `responseFormat` is `output_config.format` (`json_schema`), the thinking
 * setting is `thinking`, and `cache_control` breakpoints follow the layer's
 * cache rule (see {@link CacheRule}). Every request is accepted; the API
 * judges the rest.
 */
import type { LanguageModel, Prompt } from "@rolecraft/core"

/** A block of a Messages API message, as sent (the API's own types are wider than what is built here). */
export type Block = Readonly<Record<string, unknown>>

/** One message of a Messages API request. */
export interface WireMessage {
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<Block>
}

/** The body of a Messages API request, as this layer builds it. */
export interface Body {
  readonly model: string
  readonly max_tokens: number
  readonly messages: ReadonlyArray<WireMessage>
  readonly system?: ReadonlyArray<Block>
  readonly tools?: ReadonlyArray<Block>
  readonly tool_choice?: Block
  readonly temperature?: number
  readonly thinking?: Block
  readonly output_config?: Block
  readonly stream?: boolean
}

/** Where `cache_control` breakpoints go: `"auto"` (the tools, the system prompt and the conversation so far) or `"none"`. */
export type CacheRule = "auto" | "none"

/** The thinking setting the layer sends: a token budget, adaptive, or none. */
export type Thinking =
  | { readonly type: "enabled"; readonly budgetTokens: number }
  | { readonly type: "adaptive" }
  | { readonly type: "disabled" }

/** What the layer adds to every request: its default `max_tokens`, its thinking setting and its cache rule. */
export interface Settings {
  readonly maxTokens: number
  readonly thinking: Thinking | undefined
  readonly cache: CacheRule
}

const ephemeral = { type: "ephemeral" } as const

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The signed thinking blocks an assistant message carries for this provider (`providerData.anthropic.thinking`):
 * each `thinking` and `redacted_thinking` block as received; anything else there is not read.
 */
export const thinkingBlocksOf = (message: Prompt.AssistantMessage): ReadonlyArray<Block> => {
  const data = message.providerData?.anthropic
  if (!isRecord(data) || !Array.isArray(data.thinking)) return []
  return data.thinking.filter(
    (block): block is Block => isRecord(block) && (block.type === "thinking" || block.type === "redacted_thinking")
  )
}

/** A tool call's arguments as the `input` object the API wants (`{}` for arguments that are not a JSON object). */
const inputOf = (args: string): Readonly<Record<string, unknown>> => {
  if (args.trim() === "") return {}
  try {
    const parsed: unknown = JSON.parse(args)
    return isRecord(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

const assistantOf = (message: Prompt.AssistantMessage): WireMessage | undefined => {
  const content: Array<Block> = [...thinkingBlocksOf(message)]
  if (message.content.trim() !== "") content.push({ type: "text", text: message.content })
  for (const call of message.toolCalls ?? []) {
    content.push({ type: "tool_use", id: call.id, name: call.name, input: inputOf(call.arguments) })
  }
  // A reply with nothing to send (an empty text, no calls) is left out: the API refuses an empty message.
  return content.length === 0 ? undefined : { role: "assistant", content }
}

/** The conversation as Messages API messages, and the system blocks. */
const conversationOf = (
  messages: ReadonlyArray<Prompt.Message>
): {
  readonly system: Array<Block>
  readonly messages: Array<{ role: "user" | "assistant"; content: Array<Block> }>
} => {
  const system: Array<Block> = []
  const wire: Array<{ role: "user" | "assistant"; content: Array<Block> }> = []
  // Consecutive user-side blocks (tool results, then user text) go in one user message, as the API asks.
  const userBlock = (block: Block) => {
    const last = wire[wire.length - 1]
    if (last !== undefined && last.role === "user") last.content.push(block)
    else wire.push({ role: "user", content: [block] })
  }
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content !== "") system.push({ type: "text", text: message.content })
        break
      case "user":
        // The API refuses a text block that is empty or only whitespace: such a message says nothing.
        if (message.content.trim() !== "") userBlock({ type: "text", text: message.content })
        break
      case "tool":
        userBlock({
          type: "tool_result",
          tool_use_id: message.toolCallId,
          ...(message.content === "" ? {} : { content: message.content })
        })
        break
      case "assistant": {
        const assistant = assistantOf(message)
        if (assistant !== undefined) wire.push({ role: "assistant", content: [...assistant.content] })
        break
      }
    }
  }
  return { system, messages: wire }
}

const toolChoiceOf = (choice: LanguageModel.ToolChoice): Block => {
  if (choice === "auto") return { type: "auto" }
  if (choice === "none") return { type: "none" }
  if (choice === "required") return { type: "any" }
  return { type: "tool", name: choice.tool }
}

/**
 * The `tool_choice` of a request with tools: its `toolChoice` (default `auto` when it asks for no parallel calls),
 * with `disable_parallel_tool_use: true` when `parallelToolCalls` is `false` (not for `none`, which calls nothing).
 */
const choiceOf = (request: LanguageModel.Request): Block | undefined => {
  const choice = request.toolChoice === undefined ? undefined : toolChoiceOf(request.toolChoice)
  if (request.parallelToolCalls !== false) return choice
  const base = choice ?? { type: "auto" }
  return base.type === "none" ? base : { ...base, disable_parallel_tool_use: true }
}

const thinkingOf = (thinking: Thinking): Block =>
  thinking.type === "enabled" ? { type: "enabled", budget_tokens: thinking.budgetTokens } : { type: thinking.type }

/** `block` with a cache breakpoint. */
const cached = (block: Block): Block => ({ ...block, cache_control: ephemeral })

/** `blocks` with a cache breakpoint on the last one. */
const lastCached = (blocks: ReadonlyArray<Block>): ReadonlyArray<Block> =>
  blocks.length === 0 ? blocks : [...blocks.slice(0, -1), cached(blocks[blocks.length - 1] as Block)]

const withChoice = (choice: Block | undefined): { readonly tool_choice?: Block } =>
  choice === undefined ? {} : { tool_choice: choice }

/** The Messages API body of a model request (no streaming). */
export const requestBody = (request: LanguageModel.Request, model: string, settings: Settings): Body => {
  const { system, messages } = conversationOf(request.messages)
  const tools = (request.tools ?? []).map(
    (tool): Block => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
      ...(tool.strict ? { strict: true } : {})
    })
  )
  const auto = settings.cache === "auto"
  // The rule: one breakpoint after the tools, one after the system prompt, one on the conversation's last block
  // (three of the API's four), so each step of a turn reads the prefix the previous step wrote.
  const last = messages[messages.length - 1]
  if (auto && last !== undefined) last.content = [...lastCached(last.content)]
  return {
    model,
    max_tokens: request.maxTokens ?? settings.maxTokens,
    messages,
    ...(system.length === 0 ? {} : { system: auto ? lastCached(system) : system }),
    ...(tools.length === 0 ? {} : { tools: auto ? lastCached(tools) : tools }),
    ...(tools.length === 0 ? {} : withChoice(choiceOf(request))),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(settings.thinking === undefined ? {} : { thinking: thinkingOf(settings.thinking) }),
    ...(request.responseFormat === undefined
      ? {}
      : { output_config: { format: { type: "json_schema", schema: request.responseFormat.schema } } })
  }
}

/** The streaming request body: {@link requestBody} with `stream: true`. */
export const streamingRequestBody = (request: LanguageModel.Request, model: string, settings: Settings): Body => ({
  ...requestBody(request, model, settings),
  stream: true
})

/**
 * The body that continues a paused turn (`stop_reason: "pause_turn"`): the same request with the paused reply
 * appended as an assistant message, its content exactly as received, as the API documents.
 */
export const continued = (body: Body, paused: ReadonlyArray<Block>): Body => ({
  ...body,
  messages: [...body.messages, { role: "assistant", content: paused }]
})

/**
 * What is wrong with the layer's settings for a request, if anything: a thinking budget must be at least 1024
 * tokens and less than the request's `max_tokens` (the API refuses it otherwise).
 */
export const settingsProblem = (
  request: LanguageModel.Request,
  settings: Settings
): { readonly path: string; readonly message: string } | undefined => {
  const thinking = settings.thinking
  if (thinking?.type !== "enabled") return undefined
  const maxTokens = request.maxTokens ?? settings.maxTokens
  if (!Number.isInteger(thinking.budgetTokens) || thinking.budgetTokens < 1024) {
    return { path: "thinking.budgetTokens", message: `is ${thinking.budgetTokens}: it must be an integer >= 1024` }
  }
  if (thinking.budgetTokens >= maxTokens) {
    return {
      path: "thinking.budgetTokens",
      message: `is ${thinking.budgetTokens}: it must be less than max_tokens (${maxTokens}; the layer's maxTokens or the request's)`
    }
  }
  return undefined
}
