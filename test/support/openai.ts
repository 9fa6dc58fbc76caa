/**
 * The openai layer the end-to-end tests run turns on: the real `openai` SDK (through `@rolecraft/openai`) against
 * a local Chat Completions endpoint of `@rolecraft/testing`, with a test key and a 10-second timeout.
 */
import { OpenAiLanguageModel } from "@rolecraft/openai"
import type { ChatCompletionsServer } from "@rolecraft/testing"
import { Redacted } from "effect"

/** The openai layer on `server`'s endpoint (model `gpt-test`). */
export const openAiOn = (server: ChatCompletionsServer.ChatCompletionsServer) =>
  OpenAiLanguageModel.layer({
    model: "gpt-test",
    apiKey: Redacted.make("sk-test-key"),
    baseURL: server.baseURL,
    timeout: "10 seconds"
  })
