// The few autocannon 9 APIs autocannon-client.ts uses (the package ships no types).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: Request) => Request;
    onResponse?: (status: number, body: string) => void;
  }
  interface Options {
    url: string;
    connections: number;
    duration: number;
    pipelining?: number;
    timeout?: number;
    requests?: Request[];
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { total: number; sent: number };
  }
  interface Instance extends EventEmitter, PromiseLike<Result> {}
  export default function autocannon(options: Options): Instance;
}
