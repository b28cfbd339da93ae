// OTEL_RESOURCE_ATTRIBUTES reaches every span's resource (docs/operations.md, Tracing), next to the
// service name the process gives itself, which the variable cannot override.
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { installTracing } from '../../src/observability/tracing';

const saved = process.env.OTEL_RESOURCE_ATTRIBUTES;
afterAll(() => {
  if (saved === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
  else process.env.OTEL_RESOURCE_ATTRIBUTES = saved;
});

it('puts OTEL_RESOURCE_ATTRIBUTES on every span, the service name staying the process own', async () => {
  process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment=staging,service.version=1.0.0,service.name=other';
  const exporter = new InMemorySpanExporter();
  const tracing = installTracing({ serviceName: 'payflow-test', exporter, simple: true });
  try {
    trace.getTracer('test').startSpan('one').end();
    const [span] = exporter.getFinishedSpans();
    expect(span.resource.attributes).toMatchObject({
      'deployment.environment': 'staging',
      'service.version': '1.0.0',
      'service.name': 'payflow-test',
    });
  } finally {
    await tracing.shutdown();
  }
});
