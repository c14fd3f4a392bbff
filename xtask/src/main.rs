//! `cargo xtask bundle rosin [--release]` builds `target/bundled/Rosin.{clap,vst3}`.

fn main() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::main()
}
