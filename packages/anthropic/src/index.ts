/**
 * @rolecraft/anthropic — Rolecraft's `LanguageModel` over the official
 * `@anthropic-ai/sdk`, for Claude's Messages API.
 *
 * @since 0.3.0
 */
export * as AnthropicLanguageModel from "./AnthropicLanguageModel.ts"
