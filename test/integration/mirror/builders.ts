import type {
  DomainProfileInput,
  DomainSummaryInput,
  LicenceInput,
  PaymentMethodInput,
} from '../../../src/mirror/inputs.js';

/** A licence with plausible defaults. */
export function licence(overrides: Partial<LicenceInput> = {}): LicenceInput {
  return {
    jurisdiction: 'mga',
    license_number: 'MGA/B2C/100/2020',
    status: 'active',
    source_url: 'https://registry.example/mga/100',
    first_seen_at: '2024-01-01T00:00:00Z',
    last_confirmed_at: '2025-01-01T00:00:00Z',
    ...overrides,
  };
}

/** A payment method with plausible defaults. */
export function paymentMethod(overrides: Partial<PaymentMethodInput> = {}): PaymentMethodInput {
  return {
    normalized_name: 'visa',
    category: 'card',
    confidence: 'high',
    first_seen_at: '2024-01-01T00:00:00Z',
    last_confirmed_at: '2025-01-01T00:00:00Z',
    ...overrides,
  };
}

/** A full profile for `domain` with one licence and two payment methods unless overridden. */
export function profile(domain: string, overrides: Partial<DomainProfileInput> = {}): DomainProfileInput {
  return {
    domain,
    domain_normalized: domain,
    status: 'enriched',
    last_enriched_at: '2025-03-01T10:00:00Z',
    operator: { name: 'Acme Gaming', legal_entity_name: 'Acme Gaming Ltd', country_of_incorporation: 'MT' },
    brand: { name: 'Acme', slug: 'acme' },
    licenses: [licence()],
    payment_methods: [paymentMethod(), paymentMethod({ normalized_name: 'bitcoin', category: 'crypto' })],
    game_providers: [{ name: 'netent' }],
    affiliate_programs: [],
    geo: { countries: ['MT', 'DE'] },
    related_domains: [],
    meta: {
      freshness_age_seconds: 3600,
      served_from_cache: false,
      billable: false,
      observed_at: '2025-03-01T11:00:00Z',
    },
    ...overrides,
  };
}

/** A listing item. */
export function summary(domain: string, overrides: Partial<DomainSummaryInput> = {}): DomainSummaryInput {
  return {
    domain_normalized: domain,
    company_name: 'Acme Gaming Ltd',
    last_enriched_at: '2025-03-01T10:00:00Z',
    ...overrides,
  };
}
