/**
 * @rolecraft/testing — test layers that replace Rolecraft's real dependencies,
 * each built with the same constructor the real one uses, so the whole
 * pipeline runs under test.
 *
 * @since 0.1.0
 */
export * as Approvals from "./Approvals.ts"
export * as ChatCompletionsServer from "./ChatCompletionsServer.ts"
export * as FixedKnowledge from "./FixedKnowledge.ts"
export * as HttpRoutes from "./HttpRoutes.ts"
export * as InMemoryMcp from "./InMemoryMcp.ts"
export * as LocalHttpServer from "./LocalHttpServer.ts"
export * as MessagesServer from "./MessagesServer.ts"
export * as OtlpReceiver from "./OtlpReceiver.ts"
export * as ScriptedModel from "./ScriptedModel.ts"
export * as Telemetry from "./Telemetry.ts"
