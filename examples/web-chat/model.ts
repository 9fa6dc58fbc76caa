/**
 * Which model answers the web chat.
 *
 * - With `OPENAI_API_KEY` set: `OpenAiLanguageModel` configured from
 *   `OPENAI_API_KEY`, `OPENAI_BASE_URL` (default the OpenAI API) and
 *   `OPENAI_MODEL` (default `gpt-4.1-mini`).
 * - Without it: the offline scripted model, as in the tour. It is a real local
 *   OpenAI-compatible endpoint (`ChatCompletionsServer` on 127.0.0.1) that
 *   streams its answers as server-sent events, reached through the same
 *   `@rolecraft/openai` layer and the real `openai` SDK. Only the model's
 *   words are scripted, computed from each request; the tool calls run for
 *   real through the agent.
 */
import type { LanguageModel } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Config, type Duration, Effect, type Layer, Option, Redacted, type Scope } from "effect"

export interface Model {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  readonly description: string
  /** The offline endpoint's record of requests; absent with a real model. */
  readonly requests?: Effect.Effect<ReadonlyArray<ChatCompletionsServer.Recorded>> | undefined
}

interface WireMessage {
  readonly role: string
  readonly content?: string | null
  readonly tool_call_id?: string
  readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string } }>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const parse = (text: string | null | undefined): unknown => {
  try {
    return JSON.parse(text ?? "")
  } catch {
    return text
  }
}

const usage = (prompt: unknown, reply: string) => {
  const input = Math.max(1, Math.ceil(JSON.stringify(prompt).length / 4))
  const output = Math.max(1, Math.ceil(reply.length / 4))
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
}

/** The answer to the tool results after the last assistant message. */
const fromResults = (messages: ReadonlyArray<WireMessage>): string => {
  const names = new Map<string, string>()
  for (const message of messages) for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name)
  const lastAssistant = messages.map((message) => message.role).lastIndexOf("assistant")
  const parts = messages.slice(lastAssistant + 1).flatMap((message) => {
    const name = names.get(message.tool_call_id ?? "") ?? "a tool"
    const result = parse(message.content)
    if (isRecord(result) && isRecord(result.error)) {
      const { category, message: why } = result.error
      return category === "APPROVAL"
        ? [`I did not make that booking: it was not approved (${String(why)}).`]
        : [`I could not use ${name} (${String(category)}).`]
    }
    if (name === "searchHotels" && isRecord(result) && Array.isArray(result.hotels)) {
      const list = (result.hotels as ReadonlyArray<{ name: string; pricePerNight: number }>).map(
        (hotel) => `${hotel.name} (${hotel.pricePerNight} EUR a night)`
      )
      return list.length === 0
        ? [`I know no hotel in ${String(result.city)}.`]
        : [`In ${String(result.city)} I found ${list.join(", ")}. Shall I book one of them?`]
    }
    if (name === "bookHotel" && isRecord(result)) {
      return [
        `Booked ${String(result.hotel)} for ${String(result.nights)} nights: your confirmation is ${String(result.confirmation)}.`
      ]
    }
    return [`${name} answered ${String(message.content)}.`]
  })
  return parts.join(" ")
}

/** The offline model's answer to one request, computed from what it holds. */
export const answer = (request: ChatCompletionsServer.Recorded): ChatCompletionsServer.Step => {
  const body = isRecord(request.body) ? request.body : {}
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ReadonlyArray<WireMessage>
  const last = messages.at(-1)
  if (last?.role === "tool") {
    const text = fromResults(messages)
    return ChatCompletionsServer.reply(text, { usage: usage(messages, text) })
  }
  const input = last?.content ?? ""
  const booking = /\bbook (.+?) for (\d+) nights?/i.exec(input)
  if (booking !== null) {
    const calls = [{ name: "bookHotel", arguments: { hotel: booking[1], nights: Number(booking[2]) } }]
    return ChatCompletionsServer.toolCalls(calls, { usage: usage(messages, JSON.stringify(calls)) })
  }
  const city = /\bhotels? in ([A-Z][\p{L}]+)/u.exec(input)?.[1]
  if (city !== undefined) {
    const calls = [{ name: "searchHotels", arguments: { city } }]
    return ChatCompletionsServer.toolCalls(calls, { usage: usage(messages, JSON.stringify(calls)) })
  }
  const text = "I can search hotels in a city and book one for you. Try: Find hotels in Lisbon."
  return ChatCompletionsServer.reply(text, { usage: usage(messages, text) })
}

/** The offline model: answers as many requests as needed, streaming a chunk every `chunkDelay`. */
export const offline = (options?: {
  readonly chunkDelay?: Duration.Input | undefined
}): Effect.Effect<Model, never, Scope.Scope> =>
  Effect.gen(function* () {
    const server = yield* ChatCompletionsServer.make(
      Array.from({ length: 1000 }, () => ChatCompletionsServer.respond(answer)),
      { chunkDelay: options?.chunkDelay ?? "40 millis" }
    )
    return {
      description: `the offline scripted model (no OPENAI_API_KEY) at ${server.baseURL}, through the openai SDK`,
      requests: server.requests,
      layer: OpenAiLanguageModel.layer({
        model: "web-chat-scripted-model",
        apiKey: Redacted.make("sk-offline-web-chat"),
        baseURL: server.baseURL,
        timeout: "30 seconds"
      })
    }
  })

/** The model for this run: a real one when `OPENAI_API_KEY` is set (read through `Config`), else {@link offline}. */
export const choose = (options?: {
  readonly chunkDelay?: Duration.Input | undefined
}): Effect.Effect<Model, Config.ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const key = yield* Config.option(Config.Redacted("OPENAI_API_KEY"))
    if (Option.isNone(key) || Redacted.value(key.value).trim() === "") return yield* offline(options)
    const baseURL = Option.getOrElse(
      yield* Config.option(Config.String("OPENAI_BASE_URL")),
      () => "https://api.openai.com/v1"
    )
    const model = Option.getOrElse(yield* Config.option(Config.String("OPENAI_MODEL")), () => "gpt-4.1-mini")
    return {
      description: `${model} at ${baseURL} (OPENAI_API_KEY set)`,
      layer: OpenAiLanguageModel.layer({ model, apiKey: key.value, baseURL, timeout: "60 seconds" })
    }
  })
