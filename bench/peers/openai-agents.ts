/**
 * OpenAI Agents JS's chat scenarios: an `Agent` with one `tool()` run by
 * `run(agent, input, { maxTurns })`, over a `Model` written at the SDK's own
 * model boundary (`Model.getResponse`) that answers from the shared script;
 * and its streamed run, `run(agent, input, { stream: true })`, over
 * `Model.getStreamedResponse` yielding the shared pieces.
 *
 * Tracing is disabled (`setTracingDisabled(true)`): its default exporter posts
 * to OpenAI's servers, which a benchmark without a network must not try, and
 * the other frameworks run without exporting telemetry too.
 */
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool,
  Usage
} from "@openai/agents"
import { z } from "zod"
import {
  atModel,
  type ChatScenarios,
  counter,
  finalText,
  nextMove,
  promptFor,
  type StreamScenario,
  scenariosOf,
  streamPieces,
  streamedText,
  deltaCounter,
  toolArguments,
  toolCallsIn,
  toolDescription,
  toolName
} from "./scenario.ts"

setTracingDisabled(true)

const userText = (input: string | ReadonlyArray<AgentInputItem>): string => {
  if (typeof input === "string") return input
  for (const item of input) {
    if ("role" in item && item.role === "user") {
      if (typeof item.content === "string") return item.content
      for (const part of item.content) if (part.type === "input_text") return part.text
    }
  }
  return ""
}

const reply = (request: ModelRequest): ModelResponse => {
  const seen =
    typeof request.input === "string" ? 0 : request.input.filter((item) => item.type === "function_call_result").length
  const move = nextMove(seen, toolCallsIn(userText(request.input)))
  const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
  return move._tag === "CallTool"
    ? {
        usage,
        output: [
          { type: "function_call", callId: move.id, name: toolName, arguments: toolArguments, status: "completed" }
        ]
      }
    : {
        usage,
        output: [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: finalText }]
          }
        ]
      }
}

/** The fake model: `getResponse` answers from the script; `getStreamedResponse` streams the shared pieces. */
const model: Model = {
  getResponse: async (request) => {
    const gate = atModel()
    if (gate !== undefined) await gate
    return reply(request)
  },
  getStreamedResponse: async function* () {
    const gate = atModel()
    if (gate !== undefined) await gate
    yield { type: "response_started" }
    for (const delta of streamPieces) yield { type: "output_text_delta", delta }
    yield {
      type: "response_done",
      response: {
        id: "r1",
        usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 },
        output: [
          {
            type: "message",
            id: "m1",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: streamedText }]
          }
        ]
      }
    }
  }
}

const weather = counter("OpenAI Agents JS")
const agent = new Agent({
  name: "weather",
  instructions: "Answer questions about the weather.",
  model,
  tools: [
    tool({
      name: toolName,
      description: toolDescription,
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => weather.run(city)
    })
  ]
})

const chat = async (toolCalls: number, maxTurns: number): Promise<string | undefined> => {
  const result = await run(agent, promptFor(toolCalls), { maxTurns })
  return result.finalOutput
}

export const scenarios: ChatScenarios = scenariosOf("OpenAI Agents JS", weather, chat)

export const streamed: StreamScenario = {
  name: "OpenAI Agents JS",
  run: async (onFirstDelta) => {
    const deltas = deltaCounter("OpenAI Agents JS", onFirstDelta)
    const result = await run(agent, promptFor(0), { stream: true, maxTurns: 1 })
    for await (const event of result) {
      if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta") {
        deltas.delta(event.data.delta)
      }
    }
    await result.completed
    deltas.expect()
  }
}
