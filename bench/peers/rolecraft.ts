/**
 * Rolecraft's chat scenarios: an agent with one role whose local action
 * `get_weather` is offered to the model as a tool, run by `agent.chat(input,
 * { maxSteps })` over a scripted `LanguageModel` (built with the same
 * `LanguageModel.make` the openai layer uses) answering from the shared
 * script.
 */
import { Action, Agent, LanguageModel, type ModelResponse, type Prompt, Role } from "@rolecraft/core"
import { Effect, Layer, ManagedRuntime, Schema, Scope, Stream } from "effect"
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

// ---------------------------------------------------------------------------
// The model's side of the script, in the provider's message shape (complete).
// ---------------------------------------------------------------------------

const usage = { inputTokens: 10, outputTokens: 5 }

/** The scripted reply to a conversation: one more tool call, or the answer. */
export const reply = (messages: ReadonlyArray<Prompt.Message>): ModelResponse.ProviderResponse => {
  const seen = messages.filter((message) => message.role === "tool").length
  const user = messages.find((message) => message.role === "user")?.content ?? ""
  const move = nextMove(seen, toolCallsIn(user))
  return move._tag === "CallTool"
    ? {
        text: "",
        toolCalls: [{ id: move.id, name: toolName, arguments: toolArguments }],
        usage,
        finishReason: "tool_calls"
      }
    : { text: finalText, toolCalls: [], usage, finishReason: "stop" }
}

/** The scripted model: built with the same `LanguageModel.make` the openai layer uses, answering at once. */
const mockModel: Layer.Layer<LanguageModel.LanguageModel> = LanguageModel.layer(
  (call) => {
    const gate = atModel()
    return gate === undefined ? reply(call.request.messages) : gate.then(() => reply(call.request.messages))
  },
  {
    name: "bench"
  }
)

// ---------------------------------------------------------------------------
// The scenarios.
// ---------------------------------------------------------------------------

const weather = counter("Rolecraft")

const forecast = Role.make({
  identity: { name: "forecaster", goal: "Answer questions about the weather", domain: "weather" },
  actions: {
    [toolName]: Action.local({
      description: toolDescription,
      parameters: { city: Schema.String },
      run: ({ city }) => weather.run(city)
    })
  }
})

const runtime = ManagedRuntime.make(mockModel)
// the agent lives as long as the process: its scope is never closed
const scope = Effect.runSync(Scope.make())
const agent = await runtime.runPromise(Agent.make({ id: "bench", roles: [forecast] }).pipe(Scope.provide(scope)))

const chat = async (toolCalls: number, maxSteps: number): Promise<string | undefined> => {
  const result = await runtime.runPromise(agent.chat(promptFor(toolCalls), { maxSteps }))
  return result._tag === "Completed" ? result.text : undefined
}

export const scenarios: ChatScenarios = scenariosOf("Rolecraft", weather, chat)

// ---------------------------------------------------------------------------
// The streamed turn.
// ---------------------------------------------------------------------------

const chunks: ReadonlyArray<ModelResponse.ProviderChunk> = [
  ...streamPieces.map((text) => ({ text })),
  { finishReason: "stop", usage }
]

/** The chunks after the gate (see `holdAtModel`), for the heap of streamed turns in flight. */
async function* afterGate(gate: Promise<void>): AsyncGenerator<ModelResponse.ProviderChunk> {
  await gate
  yield* chunks
}

/** A streaming provider yielding the shared pieces at once. */
const streamingModel = LanguageModel.make(
  {
    stream: () => {
      const gate = atModel()
      return gate === undefined ? Stream.fromIterable(chunks) : afterGate(gate)
    }
  },
  { name: "bench" }
)
const streamingRuntime = ManagedRuntime.make(Layer.succeed(LanguageModel.LanguageModel, streamingModel))

export const streamed: StreamScenario = {
  name: "Rolecraft",
  run: async (onFirstDelta) => {
    const deltas = deltaCounter("Rolecraft", onFirstDelta)
    await streamingRuntime.runPromise(
      Stream.runForEach(agent.chatStream(promptFor(0), { maxSteps: 1 }), (event) =>
        event._tag === "TextDelta" ? Effect.sync(() => deltas.delta(event.delta)) : Effect.void
      )
    )
    deltas.expect()
  }
}
