/**
 * Which model answers the tour.
 *
 * - With `OPENAI_API_KEY` set: a real OpenAI-compatible endpoint through
 *   `OpenAiLanguageModel.layer`, configured the way `layerConfig` does it,
 *   plus defaults (`OPENAI_BASE_URL`, default `https://api.openai.com/v1`;
 *   `OPENAI_MODEL`, default `gpt-4.1-mini`).
 * - Without it: the offline scripted model shipped with the tour. It is a
 *   real local OpenAI-compatible endpoint (`ChatCompletionsServer` from
 *   `@rolecraft/testing`, on 127.0.0.1) whose answers come from the small
 *   script below, reached through the same `@rolecraft/openai` layer and the
 *   real `openai` SDK. Only the model's words are scripted; every tool call
 *   it makes runs for real.
 */
import type { LanguageModel } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Config, Effect, type Layer, Option, Redacted, type Scope } from "effect"

/** The model used for `OPENAI_MODEL` when it is not set. */
export const defaultModel = "gpt-4.1-mini"
const defaultBaseURL = "https://api.openai.com/v1"

export interface Model {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  readonly offline: boolean
  /** One line for the transcript: which model answers. */
  readonly description: string
}

interface WireMessage {
  readonly role: string
  readonly content?: string | null
  readonly tool_call_id?: string
  readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string } }>
}

interface WireRequest {
  readonly response_format?: unknown
  readonly messages?: ReadonlyArray<WireMessage>
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

const usage = (prompt: unknown, reply: string) => {
  const input = tokens(JSON.stringify(prompt))
  const output = tokens(reply)
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output }
}

const parse = (text: string | null | undefined): unknown => {
  try {
    return JSON.parse(text ?? "")
  } catch {
    return text
  }
}

const isRecord = (u: unknown): u is Record<string, any> => typeof u === "object" && u !== null && !Array.isArray(u)

// An llm action's prompt: the description, then "Input:" and one `name: value` line per argument.
const llmReply = (body: WireRequest, messages: ReadonlyArray<WireMessage>): ChatCompletionsServer.Step => {
  const prompt = messages.map((message) => message.content ?? "").join("\n")
  const destination = /^destination: (.+)$/m.exec(prompt)?.[1] ?? "your destination"
  const month = /^month: (.+)$/m.exec(prompt)?.[1] ?? "that month"
  const text =
    `For ${destination} in ${month}, pack light layers and a compact umbrella: warm afternoons turn cool and ` +
    "showery by evening. Bring shoes you can walk hills in all day."
  return ChatCompletionsServer.reply(text, { usage: usage(body.messages, text) })
}

// The first step of a chat turn: plan tool calls from the user's words and the tools offered.
const planTools = (body: WireRequest, offered: ReadonlyArray<string>, input: string): ChatCompletionsServer.Step => {
  const dates = input.match(/\d{4}-\d{2}-\d{2}/g) ?? []
  const city = /\bto ([A-Z][\p{L}]+)/u.exec(input)?.[1]
  const maxPrice = /at most (\d+)/.exec(input)?.[1]
  const path = /(\/\S+\.md)\b/.exec(input)?.[1]
  const readFile = offered.find((name) => name.endsWith("read_text_file"))
  const calls: Array<ChatCompletionsServer.ScriptedToolCall> = []
  if (offered.includes("nights") && dates.length >= 2) {
    calls.push({ name: "nights", arguments: { checkIn: dates[0], checkOut: dates[1] } })
  }
  if (offered.includes("searchHotels") && city !== undefined) {
    calls.push({ name: "searchHotels", arguments: { city, ...(maxPrice === undefined ? {} : { maxPrice }) } })
  }
  if (readFile !== undefined && path !== undefined) calls.push({ name: readFile, arguments: { path } })
  if (calls.length === 0) return ChatCompletionsServer.reply("I have no tool for that.", { usage: usage(body, "") })
  return ChatCompletionsServer.toolCalls(calls, { usage: usage(body.messages, JSON.stringify(calls)) })
}

// The last step: answer from the tool messages the agent sent back.
const answerFromResults = (body: WireRequest, messages: ReadonlyArray<WireMessage>): ChatCompletionsServer.Step => {
  const names = new Map<string, string>()
  for (const message of messages) for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name)
  const parts: Array<string> = []
  for (const message of messages) {
    if (message.role !== "tool") continue
    const name = names.get(message.tool_call_id ?? "") ?? "a tool"
    const result = parse(message.content)
    if (isRecord(result) && isRecord(result.error)) {
      parts.push(`I could not use ${name} (${String(result.error.category)}).`)
    } else if (name === "nights") {
      parts.push(`That is ${String(result)} nights.`)
    } else if (name === "searchHotels" && isRecord(result) && Array.isArray(result.hotels)) {
      const list = result.hotels.map((hotel: any) => `${hotel.name} (${hotel.pricePerNight} EUR a night)`)
      parts.push(list.length === 0 ? "No hotel fits that price." : `Hotels that fit: ${list.join(", ")}.`)
    } else if (name.endsWith("read_text_file")) {
      const text = isRecord(result) && typeof result.content === "string" ? result.content : String(result)
      const first = text.split("\n").find((line) => line.trim() !== "" && !line.startsWith("#")) ?? ""
      parts.push(`Your notes say: "${first.replace(/^[-*]\s*/, "")}"`)
    }
  }
  const text = parts.join(" ")
  return ChatCompletionsServer.reply(text, { usage: usage(body.messages, text) })
}

// A structured answer (the request asked for JSON matching a schema): the trip as JSON, strict style —
// the optional cheapest hotel is sent as null when the question names no budget.
const structuredReply = (body: WireRequest, messages: ReadonlyArray<WireMessage>): ChatCompletionsServer.Step => {
  const question = messages.filter((message) => message.role === "user").at(-1)?.content ?? ""
  const dates = question.match(/\d{4}-\d{2}-\d{2}/g) ?? []
  const nights =
    dates.length >= 2 ? Math.round((Date.parse(dates[1] ?? "") - Date.parse(dates[0] ?? "")) / 86_400_000) : 0
  const city = /\bin ([A-Z][\p{L}]+)/u.exec(question)?.[1] ?? "Lisbon"
  const text = JSON.stringify({ city, nights, cheapestHotel: /cheap/.test(question) ? "Casa Alfama" : null })
  return ChatCompletionsServer.reply(text, { usage: usage(body.messages, text) })
}

/** The offline model's script: one answer per request, chosen from what the request holds. */
export const answer = (request: ChatCompletionsServer.Recorded): ChatCompletionsServer.Step => {
  const body = (isRecord(request.body) ? request.body : {}) as WireRequest
  const messages = body.messages ?? []
  if (isRecord(body.response_format) && isRecord(body.response_format.json_schema)) {
    return structuredReply(body, messages)
  }
  const offered = (body.tools ?? []).map((tool) => tool.function.name)
  const last = messages[messages.length - 1]
  if (offered.length === 0) return llmReply(body, messages)
  if (last?.role === "tool") return answerFromResults(body, messages)
  return planTools(body, offered, last?.content ?? "")
}

const offline: Effect.Effect<Model, never, Scope.Scope> = Effect.gen(function* () {
  // Enough answers for the tour several times over; each is computed from its request.
  // A streamed request gets its answer a word every 15 ms, so the streamed step shows the text arriving.
  const server = yield* ChatCompletionsServer.make(
    Array.from({ length: 32 }, () => ChatCompletionsServer.respond(answer)),
    { chunkDelay: "15 millis" }
  )
  return {
    offline: true,
    description:
      `offline scripted model (no OPENAI_API_KEY): a local OpenAI-compatible endpoint at ${server.baseURL} ` +
      "answering from the tour's script, called through @rolecraft/openai and the openai SDK",
    layer: OpenAiLanguageModel.layer({
      model: "tour-scripted-model",
      apiKey: Redacted.make("sk-offline-tour"),
      baseURL: server.baseURL,
      timeout: "30 seconds"
    })
  }
})

/**
 * The model for this run. Reads `OPENAI_API_KEY`, `OPENAI_BASE_URL` and
 * `OPENAI_MODEL` through Effect `Config` (an empty key counts as unset).
 */
export const choose: Effect.Effect<Model, Config.ConfigError, Scope.Scope> = Effect.gen(function* () {
  const key = yield* Config.option(Config.Redacted("OPENAI_API_KEY"))
  if (Option.isNone(key) || Redacted.value(key.value).trim() === "") return yield* offline
  const baseURL = Option.getOrElse(yield* Config.option(Config.String("OPENAI_BASE_URL")), () => defaultBaseURL)
  const model = Option.getOrElse(yield* Config.option(Config.String("OPENAI_MODEL")), () => defaultModel)
  return {
    offline: false,
    description: `${model} at ${baseURL} (OPENAI_API_KEY set)`,
    layer: OpenAiLanguageModel.layer({ model, apiKey: key.value, baseURL, timeout: "60 seconds" })
  }
})
