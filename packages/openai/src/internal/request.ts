/**
 * The chat completions request a model request becomes: its messages in the
 * API's roles (an assistant message's tool calls as `function` calls, its
 * content `null` when it only called tools, and its reasoning sent back as
 * `reasoning_content` when it made tool calls and its reasoning came in that
 * field — DeepSeek and Moonshot refuse the next request without it; Groq and
 * Cerebras refuse an unknown field, and no other dialect needs it back), its
 * tools as `function` tools, and `temperature`, `max_completion_tokens` (the
 * request's `maxTokens`), `tool_choice` and `response_format` only when the
 * request gives them. Every request is accepted; the API judges the rest.
 */
import type { LanguageModel, Prompt } from "@rolecraft/core"
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption
} from "openai/resources/chat/completions"

const toWire = (message: Prompt.Message): ChatCompletionMessageParam => {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content }
    case "user":
      return { role: "user", content: message.content }
    case "assistant": {
      const calls = message.toolCalls ?? []
      if (calls.length === 0) return { role: "assistant", content: message.content }
      const wire: ChatCompletionMessageParam = {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments }
        }))
      }
      // DeepSeek and Moonshot refuse the next request when a tool-calling reply's reasoning is not sent back.
      return message.reasoningField === "reasoning_content" && message.reasoning !== undefined
        ? ({ ...wire, reasoning_content: message.reasoning } as ChatCompletionMessageParam)
        : wire
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content }
  }
}

const toolChoiceOf = (choice: LanguageModel.ToolChoice): ChatCompletionToolChoiceOption =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

/** The request body of one model call, not streamed. */
export const requestBody = (request: LanguageModel.Request, model: string): ChatCompletionCreateParamsNonStreaming => {
  const tools = request.tools ?? []
  return {
    model,
    messages: request.messages.map(toWire),
    ...(tools.length === 0
      ? {}
      : {
          tools: tools.map((tool) => ({
            type: "function" as const,
            function: {
              name: tool.name,
              description: tool.description,
              parameters: tool.parameters as Record<string, unknown>,
              strict: tool.strict
            }
          }))
        }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_completion_tokens: request.maxTokens }),
    ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoiceOf(request.toolChoice) }),
    // The API refuses `parallel_tool_calls` without tools.
    ...(request.parallelToolCalls === undefined || tools.length === 0
      ? {}
      : { parallel_tool_calls: request.parallelToolCalls }),
    ...(request.responseFormat === undefined
      ? {}
      : {
          response_format: {
            type: "json_schema" as const,
            json_schema: {
              name: request.responseFormat.name,
              schema: request.responseFormat.schema as Record<string, unknown>,
              strict: request.responseFormat.strict,
              ...(request.responseFormat.description === undefined
                ? {}
                : { description: request.responseFormat.description })
            }
          }
        })
  }
}

/** The request body of one streamed model call: the last chunk carries the usage. */
export const streamingRequestBody = (
  request: LanguageModel.Request,
  model: string
): ChatCompletionCreateParamsStreaming => ({
  ...requestBody(request, model),
  stream: true,
  stream_options: { include_usage: true }
})
