// Formatting: only the blanks change.
config   small {hidden = 64;}
const  x=hidden*2 ;

/// Doc comments stay.
op   copy<N>( a: f32[N] ) -> b: f32[N]
  tasks t in 1
{
        store b[0 : +N] = load a[0 : +N];
}
