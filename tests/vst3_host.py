"""End to end through a real VST3 host: pedalboard (JUCE) loads target/bundled/Rosin.vst3
headless, plays MIDI into it and reads the audio back.

Run by scripts/test.sh after the bundle is built. Prints 'N passed, M failed' and exits
non-zero on any failure.
"""

import sys
import traceback

import mido
import numpy as np
import pedalboard

BUNDLE = sys.argv[1] if len(sys.argv) > 1 else "target/bundled/Rosin.vst3"
RATE = 48000


_PLUGIN = None


def load():
    """The one instance all tests share: pedalboard probes each of the ~2100 parameters
    (nice-plug's VST3 wrapper maps every MIDI CC to one) when it loads, which takes a
    while, so the plugin is loaded once."""
    global _PLUGIN
    if _PLUGIN is None:
        _PLUGIN = pedalboard.load_plugin(BUNDLE)
    return _PLUGIN


def render(plugin, key=57, velocity=110, seconds=2.0, off=1.6):
    messages = [
        mido.Message("note_on", note=key, velocity=velocity, time=0.0),
        mido.Message("note_off", note=key, time=off),
    ]
    return plugin(messages, duration=seconds, sample_rate=RATE, num_channels=2)


def fundamental_hz(signal, expected_hz):
    """Autocorrelation peak near the expected period, refined at a many-period lag."""
    x = signal - signal.mean()

    def corr(lag):
        a, b = x[:-lag], x[lag:]
        return float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b)))

    def peak(centre, half):
        lags = range(max(2, int(centre - half)), int(centre + half) + 2)
        best = max(lags, key=corr)
        a, b, c = corr(best - 1), corr(best), corr(best + 1)
        d = a - 2 * b + c
        return best + (0.5 * (a - c) / d if d != 0 else 0.0)

    period = peak(RATE / expected_hz, RATE / expected_hz * 0.06)
    periods = 1
    while period * periods * 4 < len(x) * 0.5:
        periods *= 4
        period = peak(period * periods, 3.0) / periods
    return RATE / period


def test_is_an_instrument_with_the_contract_parameters():
    plugin = load()
    assert plugin.is_instrument
    names = {p.name for p in plugin.parameters.values()}
    for name in ["Bow Force", "Bow Velocity", "Bow Position", "Bow Noise", "Damping", "Output Gain"]:
        assert name in names, f"{name} missing from {sorted(names)[:20]}"


def test_a_note_plays_in_tune():
    audio = render(load())
    assert np.all(np.isfinite(audio))
    assert np.array_equal(audio[0], audio[1])
    steady = audio[0][int(0.9 * RATE) : int(1.55 * RATE)]
    rms_db = 20 * np.log10(np.sqrt(np.mean(steady**2)) + 1e-30)
    assert rms_db > -30, f"level {rms_db:.1} dBFS"
    pitch = fundamental_hz(steady, 220.0)
    cents = 1200 * np.log2(pitch / 220.0)
    assert abs(cents) < 3.0, f"{pitch:.3f} Hz ({cents:+.2f} cents)"


def test_parameters_shape_the_sound():
    plugin = load()
    loud = render(plugin)[0]
    plugin.output_gain_db = -40.0
    quiet = render(plugin)[0]
    plugin.output_gain_db = 0.0
    drop = 20 * np.log10(np.sqrt(np.mean(loud**2)) / np.sqrt(np.mean(quiet**2)))
    assert 35 < drop < 45, f"-40 dB of output gain changed the level by {drop:.1f} dB"


def test_state_round_trips():
    plugin = load()
    # Rosin's own parameters (the VST3 wrapper adds thousands of MIDI CC ones).
    ours = [key for key in plugin.parameters if not key.startswith("midi_")]
    assert len(ours) >= 15
    plugin.bow_force_n = 9.5
    plugin.damping_x = 3.0
    plugin.bow_velocity_m_s = -0.2
    # A VST3 host hands parameter changes to the processor with the next block.
    render(plugin, seconds=0.05, off=0.02)
    saved = plugin.raw_state
    expected = {key: getattr(plugin, key) for key in ours}
    plugin.bow_force_n = 2.0
    plugin.damping_x = 0.5
    plugin.bow_velocity_m_s = 0.3
    render(plugin, seconds=0.05, off=0.02)
    plugin.raw_state = saved
    for key in ours:
        assert getattr(plugin, key) == expected[key], f"{key}: {getattr(plugin, key)} != {expected[key]}"
    # pedalboard reads values back at display precision.
    assert abs(plugin.bow_force_n - 9.5) < 0.05 and abs(plugin.damping_x - 3.0) < 0.05
    assert abs(plugin.bow_velocity_m_s + 0.2) < 0.005


def pitch_of(audio, expected_hz, start=0.9, end=1.55):
    steady = audio[0][int(start * RATE) : int(end * RATE)]
    return fundamental_hz(steady, expected_hz)


def cents(f, reference):
    return 1200 * np.log2(f / reference)


def test_pitch_bend_lands_in_tune():
    # Channel 1 is an MPE zone's master (or a plain channel): the default range is 2
    # semitones. Full bend up takes A3 to B3.
    plugin = load()
    messages = [
        mido.Message("note_on", note=57, velocity=110, time=0.0),
        mido.Message("pitchwheel", pitch=8191, time=0.2),
        mido.Message("note_off", note=57, time=1.6),
    ]
    audio = plugin(messages, duration=2.0, sample_rate=RATE, num_channels=2)
    expected = 220.0 * 2 ** (2 * 8191 / 8192 / 12)
    pitch = pitch_of(audio, expected)
    assert abs(cents(pitch, expected)) < 3.0, f"{pitch:.3f} Hz ({cents(pitch, expected):+.2f} cents)"


def test_mpe_member_channels_bend_their_own_notes():
    # Two notes on member channels 2 and 3, bent +-1 semitone at MPE's 48-semitone range:
    # each lands on its own pitch (measured one at a time, by rendering each alone too).
    plugin = load()
    one_semitone = round(8192 / 48)
    def play(notes):
        messages = []
        for channel, key, bend in notes:
            messages.append(mido.Message("note_on", channel=channel, note=key, velocity=110, time=0.0))
            messages.append(mido.Message("pitchwheel", channel=channel, pitch=bend, time=0.2))
        for channel, key, _ in notes:
            messages.append(mido.Message("note_off", channel=channel, note=key, time=1.6))
        return plugin(messages, duration=2.0, sample_rate=RATE, num_channels=2)
    up = play([(1, 57, one_semitone)])
    down = play([(2, 64, -one_semitone)])
    for audio, expected in [(up, 220.0 * 2 ** (one_semitone * 48 / 8192 / 12)), (down, 329.628 * 2 ** (-one_semitone * 48 / 8192 / 12))]:
        pitch = pitch_of(audio, expected)
        assert abs(cents(pitch, expected)) < 3.0, f"{pitch:.3f} Hz vs {expected:.3f} ({cents(pitch, expected):+.2f} cents)"
    both = play([(1, 57, one_semitone), (2, 64, -one_semitone)])
    assert np.all(np.isfinite(both))


def test_a_storm_of_every_midi_cc_proxy_in_one_block_is_taken_without_allocating():
    """A VST3 host that restores or randomises every parameter sends each of the wrapper's
    ~2,080 MIDI-CC proxies (16 channels x 130 controllers) as an event in one block. Rosin
    asks the wrapper for room for 8,192 events a block, so the queue never grows on the
    audio thread: the library is built with the allocation guard (an allocation aborts the
    host), and the wrapper's "buffer filled up" warning never appears."""
    import os
    import tempfile

    plugin = load()
    # Taken once: pedalboard builds `plugin.parameters` anew from every parameter on each
    # access, so reading it once per proxy cost about two minutes.
    parameters = plugin.parameters
    proxies = [key for key in parameters if key.startswith("midi_")]
    assert len(proxies) >= 2000, f"only {len(proxies)} MIDI-CC proxies"
    rng = np.random.default_rng(15)
    with tempfile.TemporaryFile(mode="w+b") as log:
        saved_stderr = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            for key in proxies:
                parameter = parameters[key]
                low, high = parameter.range[0], parameter.range[1]
                setattr(plugin, key, low + (high - low) * float(rng.random()))
            audio = render(plugin, seconds=0.1, off=0.05)
        finally:
            os.dup2(saved_stderr, 2)
            os.close(saved_stderr)
        log.seek(0)
        text = log.read().decode(errors="replace")
    assert "filled up" not in text, text[-2000:]
    assert np.all(np.isfinite(audio))
    # Put the controllers back to rest, for the tests after this one.
    for key in proxies:
        parameter = parameters[key]
        setattr(plugin, key, parameter.range[0])
    render(plugin, seconds=0.05, off=0.02)
    print(f"    {len(proxies)} MIDI-CC proxies set in one block")


def main():
    tests = [(name, fn) for name, fn in globals().items() if name.startswith("test_") and callable(fn)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print(f"vst3 {name} ... ok")
        except Exception:
            failed += 1
            print(f"vst3 {name} ... FAILED")
            traceback.print_exc()
    print(f"vst3: {len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
