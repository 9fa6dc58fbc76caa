/**
 * The Responses API's streaming events read as provider chunks: text,
 * refusal and reasoning-summary deltas (a new summary part after a blank
 * line), a `function_call` item as a tool call (its id and name when the
 * item is added, its argument deltas by output index; a call whose arguments
 * came whole only on `output_item.done` gets them there), `url_citation`
 * annotations, each finished reasoning item kept in the reply's
 * `providerData` (the whole list so far: the last one seen wins), the model, and the end: `response.completed` or
 * `response.incomplete` with the usage and the finish reason (as the
 * response itself is read). `response.failed` and an `error` event end the
 * stream with their error's category. Events of the API's own tools are
 * left out.
 */
import type { ActionError, ModelResponse, Prompt } from "@rolecraft/core"
import { isRecord } from "../content.ts"
import { errorEvent } from "../failure.ts"
import { citationsOf, finishOf, reasoningItemOf, replyData, usageOf } from "./response.ts"

type Json = Prompt.ProviderFields["fields"][string]

/** A reader of one response's events: each event's chunk, `undefined` for none, or the error that ends it. */
export const eventReader = (action: string, origin: string) => {
  const reasoning: Array<Json> = []
  // Output indexes of function calls, and those whose arguments came as deltas.
  const calls = new Set<number>()
  const argued = new Set<number>()
  let summaryKey: string | undefined
  let responseId: unknown
  return (event: unknown): ModelResponse.ProviderChunk | ActionError.ActionError | undefined => {
    if (!isRecord(event)) return undefined
    const index = typeof event.output_index === "number" ? event.output_index : undefined
    switch (event.type) {
      case "response.created":
      case "response.in_progress": {
        const response = isRecord(event.response) ? event.response : {}
        responseId = response.id
        return { model: typeof response.model === "string" ? response.model : undefined }
      }
      case "response.output_text.delta":
        return typeof event.delta === "string" ? { text: event.delta } : undefined
      case "response.refusal.delta":
        return typeof event.delta === "string" ? { refusal: event.delta } : undefined
      case "response.reasoning_summary_text.delta": {
        if (typeof event.delta !== "string" || event.delta === "") return undefined
        const key = `${String(event.item_id)}:${String(event.summary_index)}`
        const gap = summaryKey !== undefined && summaryKey !== key ? "\n\n" : ""
        summaryKey = key
        return { reasoning: gap + event.delta, reasoningField: "summary" }
      }
      case "response.output_text.annotation.added":
        return isRecord(event.annotation) ? { citations: citationsOf([event.annotation]) } : undefined
      case "response.output_item.added": {
        const item = isRecord(event.item) ? event.item : {}
        if (item.type !== "function_call" || index === undefined) return undefined
        calls.add(index)
        return { toolCalls: [{ index, id: item.call_id as string, name: item.name as string }] }
      }
      case "response.function_call_arguments.delta":
        if (index === undefined || !calls.has(index) || typeof event.delta !== "string" || event.delta === "") {
          return undefined
        }
        argued.add(index)
        return { toolCalls: [{ index, arguments: event.delta }] }
      case "response.output_item.done": {
        const item = isRecord(event.item) ? event.item : {}
        if (item.type === "reasoning") {
          reasoning.push(reasoningItemOf(item))
          const providerData = replyData(origin, reasoning, responseId)
          return providerData === undefined ? undefined : { providerData }
        }
        if (item.type === "function_call" && index !== undefined && !argued.has(index)) {
          calls.add(index)
          return {
            toolCalls: [
              { index, id: item.call_id as string, name: item.name as string, arguments: item.arguments as string }
            ]
          }
        }
        return undefined
      }
      case "response.completed":
      case "response.incomplete": {
        const response = isRecord(event.response) ? event.response : {}
        const providerData = replyData(origin, reasoning, response.id ?? responseId)
        return {
          finishReason: finishOf(response, calls.size),
          usage: usageOf(response.usage),
          model: typeof response.model === "string" ? response.model : undefined,
          ...(providerData === undefined ? {} : { providerData })
        }
      }
      case "response.failed": {
        const response = isRecord(event.response) ? event.response : {}
        return errorEvent(action, response.error ?? { message: "the response failed" })
      }
      case "error":
        return errorEvent(action, isRecord(event.error) ? event.error : event)
      default:
        return undefined
    }
  }
}
