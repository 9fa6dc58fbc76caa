/**
 * Rolecraft's chat scenarios: an agent with one role whose local action
 * `get_weather` is offered to the model as a tool, run by `agent.chat(input,
 * { maxSteps })` over a scripted `LanguageModel` (built with the same
 * `LanguageModel.make` the openai layer uses) answering from the shared
 * script.
 *
 * The chat loop and `LanguageModel` are delivered by another branch. Until
 * they are merged, `unavailable` says so and `run.ts` prints
 * "rolecraft chat: not available yet" instead of failing. The API this file
 * relies on is declared below (`LanguageModelModule`, `ChatAgent`): once the
 * chat branch is in, replace those declarations with the real imports and
 * finish `mockModel` (marked TODO).
 */
import * as Core from "@rolecraft/core"
import { Action, Agent, Role } from "@rolecraft/core"
import { Effect, Layer, ManagedRuntime, Schema, Scope } from "effect"
import {
  type ChatScenarios,
  counter,
  finalText,
  nextMove,
  promptFor,
  toolArguments,
  toolCallsIn,
  toolDescription,
  toolName
} from "./scenario.ts"

// ---------------------------------------------------------------------------
// The API of the chat branch, as this bench uses it (SPEC §7 and the issue).
// TODO(lead, at merge): import these from @rolecraft/core instead.
// ---------------------------------------------------------------------------

/** A message of the conversation a provider receives. */
interface Message {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content?: string
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly toolCallId?: string
}

/** A provider's response. */
interface Response {
  readonly text: string
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number }
  readonly finishReason: "stop" | "tool_calls"
}

/** The `LanguageModel` module: a service key and `make(provider)`. */
interface LanguageModelModule {
  readonly LanguageModel: unknown
  readonly make: (provider: never) => unknown
}

/** What `agent.chat` resolves to. */
type ChatResult =
  | { readonly _tag: "Completed"; readonly text: string; readonly messages: ReadonlyArray<unknown> }
  | { readonly _tag: "AwaitingApproval" }
  | { readonly _tag: "StepLimitReached" }

interface ChatAgent {
  readonly chat?: (input: string, options: { readonly maxSteps: number }) => Effect.Effect<ChatResult, unknown, never>
}

// ---------------------------------------------------------------------------
// The model's side of the script, in the provider's message shape (complete).
// ---------------------------------------------------------------------------

const usage = { inputTokens: 10, outputTokens: 5 }

/** The scripted reply to a conversation: one more tool call, or the answer. */
export const reply = (messages: ReadonlyArray<Message>): Response => {
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

/**
 * TODO(lead, at merge): finish this adapter. It must return a Layer that
 * provides Rolecraft's `LanguageModel` service built with
 * `LanguageModel.make(provider)`, where the provider answers every request
 * with `reply(request.messages)` at once (no I/O, no timers): read the
 * conversation from the request in the provider's message shape (roles
 * system/user/assistant/tool; assistant `toolCalls: [{ id, name, arguments:
 * string }]`), and return `{ text, toolCalls, usage, finishReason }` in the
 * provider's response shape. If `make` returns the service directly, use
 * `Layer.succeed`; if it returns an Effect, `Layer.effect`. Adjust the
 * provider's method name and request shape below to the real ones, then
 * delete `LanguageModelModule` and type this against the real module.
 */
const mockModel = (module: LanguageModelModule): Layer.Layer<never> => {
  const provider = {
    generate: (request: { readonly messages: ReadonlyArray<Message> }) => Effect.succeed(reply(request.messages))
  }
  // the key and the service's type come from the chat branch; this cast is the one boundary until then
  const key = module.LanguageModel as Parameters<typeof Layer.effect>[0]
  const service = module.make(provider as never) as Effect.Effect<never>
  return Layer.effect(key, service) as Layer.Layer<never>
}

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

const languageModel = (Core as unknown as { readonly LanguageModel?: LanguageModelModule }).LanguageModel

/** Why Rolecraft's chat cannot run in this build, or `undefined` when it can. */
export let unavailable: string | undefined =
  languageModel === undefined ? "@rolecraft/core has no LanguageModel module yet" : undefined

interface Session {
  readonly runtime: ManagedRuntime.ManagedRuntime<never, unknown>
  readonly agent: ChatAgent
}

const open = async (): Promise<Session | undefined> => {
  if (languageModel === undefined) return undefined
  const runtime = ManagedRuntime.make(mockModel(languageModel))
  // the agent lives as long as the process: its scope is never closed
  const scope = Effect.runSync(Scope.make())
  const made = await runtime.runPromise(Agent.make({ id: "bench", roles: [forecast] }).pipe(Scope.provide(scope)))
  // TODO(lead, at merge): `Agent` has `chat` then; drop this widening
  const agent = made as unknown as ChatAgent
  if (typeof agent.chat !== "function") {
    unavailable = "agent.chat is missing"
    return undefined
  }
  return { runtime, agent }
}

const session = await open()

const chat = async (toolCalls: number, maxSteps: number): Promise<string | undefined> => {
  if (session === undefined || session.agent.chat === undefined) {
    throw new Error(`rolecraft chat: not available yet (${unavailable})`)
  }
  const result = await session.runtime.runPromise(session.agent.chat(promptFor(toolCalls), { maxSteps }))
  return result._tag === "Completed" ? result.text : undefined
}

export const scenarios: ChatScenarios = {
  name: "Rolecraft",
  toolCallRun: async () => {
    weather.reset()
    weather.expect("toolCallRun", 1, await chat(1, 2))
  },
  singleTurn: async () => {
    weather.reset()
    weather.expect("singleTurn", 0, await chat(0, 1))
  },
  multiTurn: async (turns, onTurn) => {
    weather.reset(onTurn)
    weather.expect("multiTurn", turns, await chat(turns, turns + 1))
  }
}
