import { Agent, request } from 'undici';
import type { EngineRequest, EngineTimeouts, HttpEngine, Response } from './http-engine.js';

/** Requests through undici: one connection pool, idle time-outs instead of whole-transfer ones. */
export class UndiciEngine implements HttpEngine {
  private readonly agent: Agent;

  constructor({ connectTimeoutMs, idleTimeoutMs }: EngineTimeouts) {
    this.agent = new Agent({ connect: { timeout: connectTimeoutMs }, headersTimeout: idleTimeoutMs, bodyTimeout: idleTimeoutMs });
  }

  request(url: string, { method, headers, body, signal }: EngineRequest): Promise<Response> {
    return request(url, { dispatcher: this.agent, method: method as 'GET', headers, body, signal });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
