/**
 * OpenAI Agents JS's chat scenarios: an `Agent` with one `tool()` run by
 * `run(agent, input, { maxTurns })`, over a `Model` written at the SDK's own
 * model boundary (`Model.getResponse`) that answers from the shared script.
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
  type ChatScenarios,
  counter,
  finalText,
  nextMove,
  promptFor,
  scenariosOf,
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

/** The fake model: `getResponse` answers from the script; streaming is not used here. */
const model: Model = {
  getResponse: async (request) => reply(request),
  getStreamedResponse: () => {
    throw new Error("the benchmark's fake model does not stream")
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
