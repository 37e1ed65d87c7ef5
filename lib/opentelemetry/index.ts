export { OpenTelemetryGaugeReporter } from './open-telemetry-gauge.reporter';
