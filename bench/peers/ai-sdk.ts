/**
 * The Vercel AI SDK's chat scenarios: `generateText` with one `tool` and
 * `stopWhen: stepCountIs(…)`, over the SDK's own `MockLanguageModelV4` (from
 * `ai/test`) answering from the shared script; and its streamed turn,
 * `streamText(...).fullStream` over a mock `doStream`.
 */
import { generateText, stepCountIs, streamText, tool } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test"
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
  deltaCounter,
  toolArguments,
  toolCallsIn,
  toolDescription,
  toolName
} from "./scenario.ts"

type GenerateResult = Awaited<ReturnType<NonNullable<MockLanguageModelV4["doGenerate"]>>>
type CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0]

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

const userText = (options: CallOptions): string => {
  for (const message of options.prompt) {
    if (message.role === "user") {
      for (const part of message.content) if (part.type === "text") return part.text
    }
  }
  return ""
}

const reply = (options: CallOptions): GenerateResult => {
  const seen = options.prompt.filter((message) => message.role === "tool").length
  const move = nextMove(seen, toolCallsIn(userText(options)))
  return move._tag === "CallTool"
    ? {
        content: [{ type: "tool-call", toolCallId: move.id, toolName, input: toolArguments }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: []
      }
    : {
        content: [{ type: "text", text: finalText }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: []
      }
}

const model = new MockLanguageModelV4({
  doGenerate: async (options) => {
    const gate = atModel()
    if (gate !== undefined) await gate
    return reply(options)
  }
})
const weather = counter("Vercel AI SDK")
const tools = {
  [toolName]: tool({
    description: toolDescription,
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => weather.run(city)
  })
}

const chat = async (toolCalls: number, maxSteps: number): Promise<string> => {
  // the mock records every call; drop the record so it does not grow across iterations
  model.doGenerateCalls.length = 0
  const result = await generateText({ model, tools, prompt: promptFor(toolCalls), stopWhen: stepCountIs(maxSteps) })
  return result.text
}

export const scenarios: ChatScenarios = scenariosOf("Vercel AI SDK", weather, chat)

// ---------------------------------------------------------------------------
// The streamed turn: `streamText(...).fullStream` over a mock model whose
// `doStream` yields the shared pieces.
// ---------------------------------------------------------------------------

const streamUsage = usage
const streamingModel = new MockLanguageModelV4({
  doStream: async () => {
    const gate = atModel()
    if (gate !== undefined) await gate
    return {
      stream: convertArrayToReadableStream([
        { type: "stream-start" as const, warnings: [] },
        { type: "text-start" as const, id: "t1" },
        ...streamPieces.map((delta) => ({ type: "text-delta" as const, id: "t1", delta })),
        { type: "text-end" as const, id: "t1" },
        { type: "finish" as const, finishReason: { unified: "stop" as const, raw: "stop" }, usage: streamUsage }
      ])
    }
  }
})

export const streamed: StreamScenario = {
  name: "Vercel AI SDK",
  run: async (onFirstDelta) => {
    streamingModel.doStreamCalls.length = 0
    const deltas = deltaCounter("Vercel AI SDK", onFirstDelta)
    const result = streamText({ model: streamingModel, tools, prompt: promptFor(0) })
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") deltas.delta(part.text)
    }
    deltas.expect()
  }
}
