/**
 * One chat turn over the real `openai` SDK, offline: the example
 * starts a local OpenAI-compatible endpoint (`ChatCompletionsServer`) whose
 * script plays the model, and a small weather service on 127.0.0.1. The model
 * calls three tools in one step — a local action (`nights`), a webService
 * action (`forecast`, against the weather service) and server-everything's
 * `echo` over stdio (an MCP tool of the agent's `mcpServers`) — each run
 * through the agent's pipeline; then it answers. The transcript shows each
 * tool call and its result.
 *
 * Against a real model, replace the layer with
 * `OpenAiLanguageModel.layerConfig()` (reads OPENAI_API_KEY, OPENAI_BASE_URL
 * and OPENAI_MODEL) and drop the endpoint.
 *
 * Run: node examples/chat.ts
 */
import { fileURLToPath } from "node:url"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Action, Agent, type Prompt, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer, LocalHttpServer } from "@rolecraft/testing"
import { Console, Effect, Layer, Redacted, Schema } from "effect"

const everything = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
)

/** A weather service: GET /v1/forecast?city=<city>. */
const weatherService = LocalHttpServer.serve((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost")
  const city = url.searchParams.get("city") ?? ""
  response.writeHead(url.pathname === "/v1/forecast" ? 200 : 404, { "content-type": "application/json" })
  response.end(JSON.stringify(url.pathname === "/v1/forecast" ? { city, days: ["sunny", "cloudy", "rain"] } : {}))
})

const travelRole = (weather: string) =>
  Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    actions: {
      nights: Action.local({
        description: "Count the nights between two dates (YYYY-MM-DD)",
        parameters: { checkIn: Schema.String, checkOut: Schema.String },
        run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
      }),
      forecast: Action.webService({
        description: "Get the three-day forecast for a city",
        parameters: { city: Schema.String },
        endpoint: `${weather}/v1/forecast`,
        timeout: "5 seconds"
      })
    }
  })

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion
})

/** The conversation as lines: the user, each tool call with its result, the answer. */
const transcript = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> => {
  const results = new Map(
    messages.flatMap((message) => (message.role === "tool" ? [[message.toolCallId, message.content] as const] : []))
  )
  return messages.flatMap((message): ReadonlyArray<string> => {
    switch (message.role) {
      case "user":
        return [`user: ${message.content}`]
      case "assistant":
        return [
          ...(message.content === "" ? [] : [`assistant: ${message.content}`]),
          ...(message.toolCalls ?? []).flatMap((call) => [
            `tool call ${call.name}(${call.arguments})`,
            `  -> ${results.get(call.id) ?? "(no answer)"}`
          ])
        ]
      default:
        return []
    }
  })
}

const program = Effect.gen(function* () {
  const weather = yield* weatherService
  const endpoint = yield* ChatCompletionsServer.make([
    ChatCompletionsServer.toolCalls(
      [
        { name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } },
        { name: "forecast", arguments: { city: "Vienna" } },
        { name: "everything_echo", arguments: { message: "Vienna booked" } }
      ],
      { usage: usage(210, 64) }
    ),
    ChatCompletionsServer.reply("Three nights in Vienna: sunny, then cloudy, then rain. Pack an umbrella.", {
      usage: usage(330, 18)
    })
  ])
  const ModelLayer = OpenAiLanguageModel.layer({
    model: "gpt-4.1-mini",
    apiKey: Redacted.make("sk-local-example"),
    baseURL: endpoint.baseURL,
    timeout: "30 seconds"
  })

  const agent = yield* Agent.make({
    id: "planner",
    roles: [travelRole(weather.url)],
    mcpServers: {
      everything: Action.mcpTool({
        description: "server-everything",
        server: { command: process.execPath, args: [everything, "stdio"] },
        tools: ["echo"],
        timeout: "10 seconds"
      })
    }
  })
  const result = yield* agent.chat("Plan three nights in Vienna from 2 November 2026.").pipe(Effect.provide(ModelLayer))

  if (result._tag !== "Completed") return yield* Effect.die(new Error(`the turn ended with ${result._tag}`))
  for (const line of transcript(result.messages)) yield* Console.log(line)
  const [first] = yield* endpoint.requests
  const offered = (first?.body as { tools?: ReadonlyArray<{ function: { name: string } }> } | undefined)?.tools ?? []
  yield* Console.log(`\nTools offered: ${offered.map((tool) => tool.function.name).join(", ")}`)
  yield* Console.log(`${result.steps} model call${result.steps === 1 ? "" : "s"}, ${result.usage.totalTokens} tokens.`)
}).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(NodeHttpClient.layerUndici, McpClientSdk.layer())))

NodeRuntime.runMain(program)
