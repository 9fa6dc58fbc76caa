/**
 * What a provider attaches to a tool call and needs back goes back on that call — Gemini's OpenAI-compatible
 * endpoint puts `extra_content.google.thought_signature` on each call and answers 400 when the replayed call
 * lacks it — plain and streamed, after a paused state's JSON round trip on a fresh agent, and in a thread; and
 * it is sent back only to the endpoint that made it, never to another provider the conversation moves to.
 * Real `openai` SDK, local endpoints.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, ApprovalStore, Chat, type Prompt, Role, ThreadStore } from "@rolecraft/core"
import { OpenAiResponsesModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server, ResponsesServer } from "@rolecraft/testing"
import { Effect, Redacted, Schema, Stream } from "effect"
import { openAiOn } from "../support/openai.ts"
import * as Seeded from "../support/seeded.ts"

const signature = { google: { thought_signature: "CiQB0e2Kb7xvQeK1Tq2kC1RdGQ==" } }

const wireCall = {
  id: "function-call-7e1",
  type: "function",
  function: { name: "check_flight", arguments: '{"flight":"AA100"}' },
  extra_content: signature
}

interface WireMessage {
  readonly role: string
  readonly tool_calls?: ReadonlyArray<Record<string, unknown>>
}

const replayedCalls = (body: unknown) =>
  (body as { readonly messages: ReadonlyArray<WireMessage> }).messages.flatMap((message) => message.tool_calls ?? [])

/** Gemini's rule: every replayed call carries its signature, else 400 (after the tool already ran). */
const geminiNext = (answer: string) =>
  Server.respond((request) =>
    replayedCalls(request.body).every((call) => JSON.stringify(call.extra_content) === JSON.stringify(signature))
      ? Server.reply(answer)
      : Server.error(400, { message: "Function call is missing a thought_signature in functionCall parts." })
  )

const firstStep = (streamed: boolean) =>
  streamed
    ? Server.chunks([
        {
          id: "c1",
          object: "chat.completion.chunk",
          created: 1,
          model: "gemini-3",
          choices: [{ index: 0, delta: { role: "assistant" } }]
        },
        {
          id: "c1",
          object: "chat.completion.chunk",
          created: 1,
          model: "gemini-3",
          choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...wireCall }] } }]
        },
        {
          id: "c1",
          object: "chat.completion.chunk",
          created: 1,
          model: "gemini-3",
          choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }]
        }
      ])
    : Server.raw(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 1,
          model: "gemini-3",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, tool_calls: [wireCall] },
              finish_reason: "tool_calls"
            }
          ],
          usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 }
        }),
        { headers: { "content-type": "application/json" } }
      )

const flights = (approval: boolean) => {
  const ran: Array<unknown> = []
  const check = Action.local({
    description: "Checks a flight",
    parameters: { flight: Schema.String },
    run: (input) => {
      ran.push(input)
      return "on time"
    }
  })
  const role = Role.make({
    identity: { name: "flights", goal: "Check flights", domain: "travel" },
    actions: { check_flight: approval ? check.pipe(Action.requireApproval({ reason: "Asks the airline" })) : check }
  })
  return { role, ran }
}

/** A turn's result, by `chat` or by the last event of `chatStream`. */
const turnOf = (agent: Agent.Agent<any, never>, input: Chat.Input, streamed: boolean, options?: Chat.ChatOptions) =>
  streamed
    ? Effect.map(Stream.runCollect(agent.chatStream(input, options)), (events) => {
        const last = events.at(-1)
        assert.strictEqual(last?._tag, "TurnFinished")
        return (last as Extract<Chat.ChatEvent, { _tag: "TurnFinished" }>).result
      })
    : agent.chat(input, options)

const lastCallOf = (messages: ReadonlyArray<Prompt.Message>) => {
  const assistant = messages.findLast((message) => message.role === "assistant" && message.toolCalls !== undefined)
  return assistant?.role === "assistant" ? assistant.toolCalls?.[0] : undefined
}

describe("provider fields on a tool call", () => {
  for (const streamed of [false, true]) {
    const how = streamed ? "streamed" : "plain"
    it.live(`are sent back on the call in the next request, and kept in the history (${how})`, () =>
      Effect.gen(function* () {
        const server = yield* Server.make([firstStep(streamed), geminiNext("AA100 is on time.")])
        const { role, ran } = flights(false)
        const agent = (yield* Agent.make({ id: "desk", roles: [role] })) as unknown as Agent.Agent<any, never>
        const result = yield* turnOf(agent, "Is AA100 on time?", streamed).pipe(Effect.provide(openAiOn(server)))
        assert.strictEqual(result._tag, "Completed", JSON.stringify(result))
        assert.deepStrictEqual(ran, [{ flight: "AA100" }])
        const requests = yield* server.requests
        assert.deepStrictEqual(replayedCalls(requests[1]?.body), [wireCall])
        assert.deepStrictEqual(lastCallOf((result as Chat.Completed).messages)?.provider, {
          origin: `openai.chat ${server.baseURL}`,
          fields: { extra_content: signature }
        })
      }).pipe(Effect.scoped)
    )

    it.live(`survive a paused state's JSON round trip, resumed on a fresh agent (${how})`, () =>
      Effect.gen(function* () {
        const server = yield* Server.make([firstStep(streamed), geminiNext("AA100 is on time.")])
        const { role, ran } = flights(true)
        const first = (yield* Agent.make({ id: "desk", roles: [role] })) as unknown as Agent.Agent<any, never>
        const paused = yield* turnOf(first, "Is AA100 on time?", streamed).pipe(Effect.provide(openAiOn(server)))
        assert.strictEqual(paused._tag, "AwaitingApproval", JSON.stringify(paused))
        const state = JSON.parse(JSON.stringify((paused as Chat.AwaitingApproval).state)) as Chat.PausedState
        const fresh = (yield* Agent.make({ id: "desk", roles: [role] })) as unknown as Agent.Agent<any, never>
        const resumed = yield* fresh
          .resume(state, { "function-call-7e1": Chat.approve("ann") })
          .pipe(Effect.provide(openAiOn(server)))
        assert.strictEqual(resumed._tag, "Completed", JSON.stringify(resumed))
        assert.deepStrictEqual(ran, [{ flight: "AA100" }])
        assert.deepStrictEqual(replayedCalls((yield* server.requests)[1]?.body), [wireCall])
        // Both agents share one approval store, as two processes share a database.
      }).pipe(Effect.scoped, Effect.provide(ApprovalStore.layerMemory))
    )
  }

  it.live("are kept in a thread and sent back on its next turn", () =>
    Effect.gen(function* () {
      const server = yield* Server.make([firstStep(false), geminiNext("AA100 is on time."), geminiNext("Gate 4.")])
      const { role } = flights(false)
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const thread = `signatures-${Seeded.randomUUID()}`
      yield* agent.chat("Is AA100 on time?", { thread }).pipe(Effect.provide(openAiOn(server)))
      const next = yield* agent.chat("Which gate?", { thread }).pipe(Effect.provide(openAiOn(server)))
      assert.strictEqual(next._tag, "Completed", JSON.stringify(next))
      assert.deepStrictEqual(replayedCalls((yield* server.requests)[2]?.body), [wireCall])
    }).pipe(Effect.scoped, Effect.provide(ThreadStore.layerMemory))
  )

  it.live("are never sent to another endpoint: a conversation moved to an agent on another provider", () =>
    Effect.gen(function* () {
      const gemini = yield* Server.make([firstStep(false), geminiNext("AA100 is on time.")])
      const other = yield* Server.make([
        Server.respond((request) =>
          JSON.stringify(request.body).includes("thought_signature")
            ? Server.error(400, { message: "Unrecognized request argument supplied: extra_content" })
            : Server.reply("Gate 4.")
        )
      ])
      const { role } = flights(false)
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      const first = yield* agent.chat("Is AA100 on time?").pipe(Effect.provide(openAiOn(gemini)))
      assert.strictEqual(first._tag, "Completed")
      const history = [...(first as Chat.Completed).messages, { role: "user" as const, content: "Which gate?" }]
      const moved = yield* agent.chat(history).pipe(Effect.provide(openAiOn(other)))
      assert.strictEqual(moved._tag, "Completed", JSON.stringify(moved))
      const sent = replayedCalls((yield* other.requests)[0]?.body)
      assert.deepStrictEqual(sent, [
        {
          id: "function-call-7e1",
          type: "function",
          function: { name: "check_flight", arguments: '{"flight":"AA100"}' }
        }
      ])
    }).pipe(Effect.scoped)
  )
})

describe("a conversation moved between APIs carries no other API's fields", () => {
  it.live("Responses reasoning never reaches chat completions, and Gemini's signatures never reach Responses", () =>
    Effect.gen(function* () {
      const encrypted = "gAAAAABencrypted-reasoning"
      const responses = yield* ResponsesServer.make([
        ResponsesServer.body({
          id: "resp_0123456789abcdef0123",
          object: "response",
          status: "completed",
          model: "gpt-test",
          output: [
            {
              type: "reasoning",
              id: "rs_1",
              summary: [{ type: "summary_text", text: "Check it." }],
              encrypted_content: encrypted
            },
            {
              type: "function_call",
              id: "fc_1",
              call_id: "call_r1",
              name: "check_flight",
              arguments: '{"flight":"AA100"}'
            }
          ],
          usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 }
        }),
        ResponsesServer.respond((request) =>
          JSON.stringify(request.body).includes(encrypted)
            ? ResponsesServer.body({
                id: "resp_0123456789abcdef0124",
                object: "response",
                status: "completed",
                model: "gpt-test",
                output: [
                  {
                    type: "message",
                    role: "assistant",
                    content: [{ type: "output_text", text: "On time.", annotations: [] }]
                  }
                ],
                usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 }
              })
            : ResponsesServer.error(400, "the reasoning item was not sent back")
        ),
        // Third: the Gemini conversation handed to Responses.
        ResponsesServer.respond((request) =>
          JSON.stringify(request.body).includes("thought_signature")
            ? ResponsesServer.error(400, "Unknown parameter: extra_content")
            : ResponsesServer.body({
                id: "resp_0123456789abcdef0125",
                object: "response",
                status: "completed",
                model: "gpt-test",
                output: [
                  {
                    type: "message",
                    role: "assistant",
                    content: [{ type: "output_text", text: "Gate 4.", annotations: [] }]
                  }
                ],
                usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 }
              })
        )
      ])
      const chat = yield* Server.make([
        Server.respond((request) =>
          JSON.stringify(request.body).includes(encrypted)
            ? Server.error(400, { message: "Unrecognized request argument supplied: reasoning" })
            : Server.reply("Gate 4.")
        ),
        firstStep(false),
        geminiNext("AA100 is on time.")
      ])
      const responsesLayer = OpenAiResponsesModel.layer({
        model: "gpt-test",
        apiKey: Redacted.make("sk-responses-key"),
        baseURL: responses.baseURL,
        timeout: "10 seconds"
      })
      const { role } = flights(false)
      const agent = yield* Agent.make({ id: "desk", roles: [role] })
      // Responses first: its reasoning is kept on the reply and goes back to Responses.
      const first = yield* agent.chat("Is AA100 on time?").pipe(Effect.provide(responsesLayer))
      assert.strictEqual(first._tag, "Completed", JSON.stringify(first))
      const kept = (first as Chat.Completed).messages.find((m) => m.role === "assistant")
      assert.deepStrictEqual(kept?.role === "assistant" ? Object.keys(kept.providerData ?? {}) : undefined, [
        `openai.responses ${responses.baseURL}`
      ])
      // Handed to chat completions: no reasoning item on the wire.
      const moved = yield* agent
        .chat([...(first as Chat.Completed).messages, { role: "user", content: "Which gate?" }])
        .pipe(Effect.provide(openAiOn(chat)))
      assert.strictEqual(moved._tag, "Completed", JSON.stringify(moved))
      // Gemini's conversation handed to Responses: no signature on the wire.
      const gemini = yield* agent.chat("Is AA100 on time?").pipe(Effect.provide(openAiOn(chat)))
      assert.strictEqual(gemini._tag, "Completed", JSON.stringify(gemini))
      const back = yield* agent
        .chat([...(gemini as Chat.Completed).messages, { role: "user", content: "Which gate?" }])
        .pipe(Effect.provide(responsesLayer))
      assert.strictEqual(back._tag, "Completed", JSON.stringify(back))
      assert.strictEqual((yield* responses.requests).length, 3)
    }).pipe(Effect.scoped)
  )
})
