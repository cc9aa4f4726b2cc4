// Lambda events as AWS sends them (shapes from the AWS documentation's samples, every field kept),
// around a request the test signs: a function URL event, an HTTP API payload 2.0 event on a named
// stage with a `{source}` route, and the shapes hookinbox refuses (REST API v1, ALB).

/** The request a test wants delivered: method, path, headers, body text or bytes. */
export interface LambdaRequest {
  readonly method?: string;
  readonly path: string;
  readonly query?: string;
  readonly headers: Record<string, string>;
  /** Text (sent as is) or bytes (sent base64, `isBase64Encoded: true`). */
  readonly body: string | Uint8Array;
  /** Sent instead of `body`'s base64 (to test what a broken encoder would send). */
  readonly rawBase64?: string;
  readonly sourceIp?: string;
  readonly cookies?: string[];
}

const time = { time: "05/Dec/2026:08:00:00 +0000", timeEpoch: 1796457600000 };

function encoded(request: LambdaRequest): { body: string; isBase64Encoded: boolean } {
  if (request.rawBase64 !== undefined) return { body: request.rawBase64, isBase64Encoded: true };
  if (typeof request.body === "string") return { body: request.body, isBase64Encoded: false };
  return { body: Buffer.from(request.body).toString("base64"), isBase64Encoded: true };
}

const bodyLength = (request: LambdaRequest) =>
  String(
    typeof request.body === "string" ? Buffer.byteLength(request.body) : request.body.byteLength,
  );

/**
 * A Lambda function URL event (payload 2.0, route `$default`, no path parameters).
 *
 * @example
 * ```ts
 * await handler(functionUrlEvent({ path: "/webhooks/stripe", ...stripeRequest("evt_1") }));
 * ```
 */
export function functionUrlEvent(request: LambdaRequest) {
  const domainName = "r3pmxmplak5ct6rvkpvh7m4w7i0fyrgk.lambda-url.us-east-1.on.aws";
  const method = request.method ?? "POST";
  const sourceIp = request.sourceIp ?? "54.187.174.169";
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: request.path,
    rawQueryString: request.query ?? "",
    ...(request.cookies ? { cookies: request.cookies } : {}),
    headers: {
      "content-length": bodyLength(request),
      "x-amzn-tls-cipher-suite": "ECDHE-RSA-AES128-GCM-SHA256",
      "x-amzn-tls-version": "TLSv1.2",
      "x-amzn-trace-id": "Root=1-6751a0c0-2b5c1f0e3d4a5b6c7d8e9f00",
      "x-forwarded-proto": "https",
      host: domainName,
      "x-forwarded-port": "443",
      "x-forwarded-for": sourceIp,
      accept: "*/*; q=0.5, application/xml",
      "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      ...request.headers,
    },
    requestContext: {
      accountId: "anonymous",
      apiId: "r3pmxmplak5ct6rvkpvh7m4w7i0fyrgk",
      domainName,
      domainPrefix: "r3pmxmplak5ct6rvkpvh7m4w7i0fyrgk",
      http: {
        method,
        path: request.path,
        protocol: "HTTP/1.1",
        sourceIp,
        userAgent: "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      },
      requestId: "c3a7a2ad-5f2b-4f0e-9d1c-2b7e3f4a5b6c",
      routeKey: "$default",
      stage: "$default",
      ...time,
    },
    ...encoded(request),
  };
}

/**
 * An API Gateway HTTP API event, payload 2.0, route `POST /webhooks/{source}` on stage `prod`.
 *
 * @example
 * ```ts
 * httpApiEvent({ source: "stripe", path: "/webhooks/stripe", headers, body: bytes }); // base64
 * ```
 */
export function httpApiEvent(request: LambdaRequest & { readonly source: string }) {
  const domainName = "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com";
  const method = request.method ?? "POST";
  const sourceIp = request.sourceIp ?? "3.18.12.63";
  return {
    version: "2.0",
    routeKey: `${method} /webhooks/{source}`,
    rawPath: `/prod${request.path}`,
    rawQueryString: request.query ?? "",
    ...(request.cookies ? { cookies: request.cookies } : {}),
    headers: {
      "content-length": bodyLength(request),
      host: domainName,
      "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      "x-amzn-trace-id": "Root=1-6751a0c0-1a2b3c4d5e6f7a8b9c0d1e2f",
      "x-forwarded-for": sourceIp,
      "x-forwarded-port": "443",
      "x-forwarded-proto": "https",
      ...request.headers,
    },
    queryStringParameters: request.query
      ? Object.fromEntries(new URLSearchParams(request.query))
      : undefined,
    requestContext: {
      accountId: "123456789012",
      apiId: "a1b2c3d4e5",
      domainName,
      domainPrefix: "a1b2c3d4e5",
      http: {
        method,
        path: `/prod${request.path}`,
        protocol: "HTTP/1.1",
        sourceIp,
        userAgent: "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      },
      requestId: "JKJaXmPLvHcESHA=",
      routeKey: `${method} /webhooks/{source}`,
      stage: "prod",
      ...time,
    },
    pathParameters: { source: request.source },
    stageVariables: undefined,
    ...encoded(request),
  };
}

/**
 * An API Gateway REST API (payload 1.0) proxy event: refused.
 *
 * @example
 * ```ts
 * restApiEvent({ source: "stripe", path: "/webhooks/stripe", headers, body: "{}" });
 * ```
 */
export function restApiEvent(request: LambdaRequest & { readonly source: string }) {
  return {
    resource: "/webhooks/{source}",
    path: request.path,
    httpMethod: "POST",
    headers: { ...request.headers, Host: "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com" },
    multiValueHeaders: Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, [value]]),
    ),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { source: request.source },
    stageVariables: null,
    requestContext: {
      accountId: "123456789012",
      apiId: "a1b2c3d4e5",
      httpMethod: "POST",
      identity: { sourceIp: "3.18.12.63", userAgent: "Stripe/1.0" },
      path: `/prod${request.path}`,
      protocol: "HTTP/1.1",
      requestId: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
      requestTimeEpoch: 1796457600000,
      resourceId: "123456",
      resourcePath: "/webhooks/{source}",
      stage: "prod",
    },
    ...encoded(request),
  };
}

/**
 * An Application Load Balancer target event: refused.
 *
 * @example
 * ```ts
 * albEvent({ path: "/webhooks/stripe", headers, body: "{}" });
 * ```
 */
export function albEvent(request: LambdaRequest) {
  return {
    requestContext: {
      elb: {
        targetGroupArn:
          "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/lambda-279XGJDqGZ5rsrHC2Fjr/49e9d65c45c6791a",
      },
    },
    httpMethod: "POST",
    path: request.path,
    queryStringParameters: {},
    headers: { ...request.headers, host: "lambda-alb-123578498.us-east-1.elb.amazonaws.com" },
    ...encoded(request),
  };
}
