-- Gateway-wide settings an admin changes at run time (PUT /v1/management/settings): one row,
-- one typed column per setting. The key column can only be true, so a second row cannot exist.
-- bootstrap_locked: API_KEY_CREATE=true mints no key while an admin client exists (off: the
-- seed's behaviour).
CREATE TABLE gateway_settings (
  singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  bootstrap_locked boolean NOT NULL DEFAULT false,
  updated_at       timestamptz NOT NULL DEFAULT now()
);

INSERT INTO gateway_settings DEFAULT VALUES;
