/**
 * A Rolecraft model request as effect/ai asks for it: the messages as an
 * effect/ai prompt (an assistant message's reasoning as a reasoning part,
 * tool results under the name of the call they answer, Rolecraft's
 * `{"error":{…}}` answers marked as failures), the offered tools as dynamic
 * tools carrying Rolecraft's JSON Schema, and the tool choice. Refuses
 * nothing: what effect/ai cannot take, it refuses itself.
 */
import type { LanguageModel, Prompt } from "@rolecraft/core"
import { type LanguageModel as AiLanguageModel, Prompt as AiPrompt, Tool, Toolkit } from "effect/ai"

type Json = Record<string, unknown>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

// A small pure boundary around `JSON.parse`: text that is not JSON stays text.
const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A tool message's content as effect/ai's tool result: a failure is Rolecraft's `{"error":{…}}`. */
const toolResultOf = (content: string): { readonly result: unknown; readonly isFailure: boolean } => {
  const value = parsed(content)
  const isFailure = isRecord(value) && Object.keys(value).length === 1 && isRecord(value.error)
  return { result: value, isFailure }
}

/**
 * Rolecraft's messages as an effect/ai prompt (the encoded form `Prompt.make`
 * decodes). An assistant message's reasoning goes first, as a reasoning part
 * (the effect/ai provider decides whether its API takes it back). A tool
 * message is answered under the name of the call it answers, taken from the
 * assistant message that made it.
 */
export const promptOf = (messages: ReadonlyArray<Prompt.Message>): AiPrompt.Prompt => {
  const names = new Map<string, string>()
  const encoded: Array<AiPrompt.MessageEncoded> = messages.map((message): AiPrompt.MessageEncoded => {
    switch (message.role) {
      case "system":
        return { role: "system", content: message.content }
      case "user":
        return { role: "user", content: message.content }
      case "assistant": {
        const calls = message.toolCalls ?? []
        for (const call of calls) names.set(call.id, call.name)
        return {
          role: "assistant",
          content: [
            ...(message.reasoning === undefined ? [] : [{ type: "reasoning" as const, text: message.reasoning }]),
            ...(message.content.length === 0 ? [] : [{ type: "text" as const, text: message.content }]),
            ...calls.map((call) => ({
              type: "tool-call" as const,
              id: call.id,
              name: call.name,
              params: call.arguments.trim().length === 0 ? {} : parsed(call.arguments),
              providerExecuted: false
            }))
          ]
        }
      }
      default:
        return {
          role: "tool",
          content: [
            {
              type: "tool-result",
              id: message.toolCallId,
              name: names.get(message.toolCallId) ?? "",
              providerExecuted: false,
              ...toolResultOf(message.content)
            }
          ]
        }
    }
  })
  return AiPrompt.make(encoded)
}

/**
 * The tools of a request as effect/ai dynamic tools: the name, description
 * and JSON Schema Rolecraft projected, with no Effect Schema, so effect/ai
 * neither validates nor decodes the arguments — Rolecraft's pipeline does.
 */
export const toolkitOf = (tools: NonNullable<LanguageModel.Request["tools"]>) =>
  Toolkit.make(
    ...tools.map((tool) =>
      Tool.dynamic(tool.name, { description: tool.description, parameters: tool.parameters }).annotate(
        Tool.Strict,
        tool.strict
      )
    )
  )

export const toolChoiceOf = (choice: LanguageModel.ToolChoice): AiLanguageModel.ToolChoice<string> =>
  typeof choice === "string" ? choice : { tool: choice.tool }
