/**
 * @rolecraft/effect-ai — Rolecraft and Effect's AI modules in both
 * directions: an `effect/ai` `LanguageModel` as Rolecraft's model
 * (`EffectAiModel`), and an agent's actions as an `effect/ai` `Toolkit` whose
 * every call runs through the agent's pipeline (`EffectAiToolkit`).
 *
 * @since 0.1.0
 */
export * as EffectAiModel from "./EffectAiModel.ts"
export * as EffectAiToolkit from "./EffectAiToolkit.ts"
