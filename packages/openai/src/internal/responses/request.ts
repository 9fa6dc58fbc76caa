/**
 * The Responses API request a model request becomes: its messages as input
 * items — system and user messages as messages; an assistant message as the
 * reasoning items its `providerData` keeps under this endpoint's origin
 * (sent back with their encrypted content, only to the endpoint that made
 * them), its text as an assistant
 * message (none when blank), and each tool call as a `function_call` item;
 * a tool message as a `function_call_output` — its tools as `function`
 * tools, `parallel_tool_calls` (with tools), `temperature`,
 * `max_output_tokens`, `tool_choice` and a
 * `json_schema` text format only when given. `store` is `false` unless the
 * layer says otherwise, and the reasoning's encrypted content is asked for,
 * so reasoning survives across tool calls without the server keeping state.
 * With `store: true`, the last assistant reply's response id (kept in its
 * `providerData`) is sent as `previous_response_id` and only the messages
 * after that reply are sent.
 */
import type { LanguageModel, Prompt } from "@rolecraft/core"

type Item = Readonly<Record<string, unknown>>

/** What a Responses request is built with: the endpoint's origin and whether the server keeps responses. */
export interface RequestOptions {
  readonly origin: string
  readonly store: boolean
}

/** What this endpoint kept on a reply (its `providerData` under the endpoint's origin), if anything. */
const ownFields = (message: Prompt.AssistantMessage, origin: string): Readonly<Record<string, unknown>> | undefined => {
  const data = message.providerData?.[origin]
  return typeof data === "object" && data !== null ? (data as Readonly<Record<string, unknown>>) : undefined
}

const itemsOf = (message: Prompt.Message, origin: string): ReadonlyArray<Item> => {
  switch (message.role) {
    case "system":
    case "user":
      return [{ role: message.role, content: message.content }]
    case "tool":
      return [{ type: "function_call_output", call_id: message.toolCallId, output: message.content }]
    case "assistant": {
      const items: Array<Item> = []
      const reasoning = ownFields(message, origin)?.reasoning
      if (Array.isArray(reasoning)) for (const item of reasoning) items.push(item as Item)
      if (message.content.trim() !== "") items.push({ role: "assistant", content: message.content })
      for (const call of message.toolCalls ?? []) {
        items.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments })
      }
      return items
    }
  }
}

/** The messages to send: all of them, or (store on) those after the last reply the server already keeps. */
const sentMessages = (
  messages: ReadonlyArray<Prompt.Message>,
  options: RequestOptions
): { readonly messages: ReadonlyArray<Prompt.Message>; readonly previous: string | undefined } => {
  if (!options.store) return { messages, previous: undefined }
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Prompt.Message
    if (message.role !== "assistant") continue
    const id = ownFields(message, options.origin)?.responseId
    if (typeof id === "string") return { messages: messages.slice(i + 1), previous: id }
    break
  }
  return { messages, previous: undefined }
}

const toolChoiceOf = (choice: LanguageModel.ToolChoice) =>
  typeof choice === "string" ? choice : { type: "function", name: choice.tool }

/** The body of one Responses call (`stream` as asked). */
export const requestBody = (
  request: LanguageModel.Request,
  model: string,
  options: RequestOptions,
  stream: boolean
): Record<string, unknown> => {
  const { messages, previous } = sentMessages(request.messages, options)
  const tools = request.tools ?? []
  const format = request.responseFormat
  return {
    model,
    input: messages.flatMap((message) => itemsOf(message, options.origin)),
    store: options.store,
    include: ["reasoning.encrypted_content"],
    ...(previous === undefined ? {} : { previous_response_id: previous }),
    ...(tools.length === 0
      ? {}
      : {
          tools: tools.map((tool) => ({
            type: "function",
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
            strict: tool.strict
          }))
        }),
    // The API refuses `parallel_tool_calls` without tools.
    ...(request.parallelToolCalls === undefined || tools.length === 0
      ? {}
      : { parallel_tool_calls: request.parallelToolCalls }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_output_tokens: request.maxTokens }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoiceOf(request.toolChoice) }),
    ...(format === undefined
      ? {}
      : {
          text: {
            format: {
              type: "json_schema",
              name: format.name,
              schema: format.schema,
              strict: format.strict,
              ...(format.description === undefined ? {} : { description: format.description })
            }
          }
        }),
    ...(stream ? { stream: true } : {})
  }
}
