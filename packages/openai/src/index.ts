/**
 * @rolecraft/openai — Rolecraft's `LanguageModel` over the official `openai`
 * SDK, for OpenAI and any OpenAI-compatible endpoint.
 *
 * @since 0.1.0
 */
export * as OpenAiLanguageModel from "./OpenAiLanguageModel.ts"
export * as OpenAiResponsesModel from "./OpenAiResponsesModel.ts"
