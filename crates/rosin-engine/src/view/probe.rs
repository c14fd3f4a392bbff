//! One sample of a voice's bow contact, as the lab view records it ([`super::lab`]). Its
//! own module, with no dependencies, so that the voices can report it without depending on
//! the recorder that reads them.

/// One sample of a bow's contact, and what it is drawn against.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactProbe {
    /// The friction force on the bow (N).
    pub force_n: f64,
    /// The relative velocity the friction law sees (m/s): the string's, less the bow hair's
    /// under the passive refined law.
    pub law_velocity_mps: f64,
    /// The string's (or membrane's) velocity under the bow (m/s).
    pub bow_point_velocity_mps: f64,
    pub bow_velocity_mps: f64,
    pub normal_force_n: f64,
}
